package dashboard

// The executions list and the execution card. The list is a keyset page
// of the audit trail (audit.Filter.Before), so the last page of 100,000
// events costs what the first does; new rows come from the same query
// with audit.Filter.After when the live stream says an execution ended.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/card"
)

// pageSize is how many rows a page of the list holds.
const pageSize = 50

// A Row is one line of the list, as the page and the live script show it:
// every string is ready to be shown as text.
type Row struct {
	ID         string `json:"id"`
	Cursor     string `json:"cursor"`
	Glyph      string `json:"glyph"`
	Status     string `json:"status"`
	Class      string `json:"class"` // ok | warn | bad
	Time       string `json:"time"`
	Agent      string `json:"agent"`
	Surface    string `json:"surface"`
	Command    string `json:"command"`
	Exit       string `json:"exit"`
	Duration   string `json:"duration"`
	Mode       string `json:"mode"`
	Redactions int    `json:"redactions"`
	// Decision is the id of the decision a routed call's execution joins:
	// the live script drops that decision's row when its execution comes.
	Decision string `json:"decision,omitempty"`
}

// rowOf is e as a Row: its mark from the one table (card.Marks), the
// command on one line, cut at 100 characters, its controls shown escaped.
func rowOf(e *audit.Entry) Row {
	ev := &e.Event
	mark := card.MarkOf(ev)
	cmd := e.Command
	if cmd == "" && ev.Tool != "" {
		cmd = ev.Tool + " " + strings.Join(ev.Paths, " ")
	}
	return Row{
		ID: ev.ID, Cursor: e.Cursor().String(), Glyph: mark.Glyph, Status: audit.StatusText(ev), Class: mark.Class, Decision: ev.ParentID,
		Time: ev.Time.Local().Format("2006-01-02 15:04:05"), Agent: dashOf(ev.Agent), Surface: dashOf(ev.Surface),
		Command: audit.Shorten(cmd, 100), Exit: strings.TrimPrefix(audit.ExitText(ev), "exit "),
		Duration: audit.DurationText(ev), Mode: dashOf(ev.SandboxMode), Redactions: ev.Output.RedactionCount,
	}
}

func dashOf(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// filterForm is the list's filters as the form holds them.
type filterForm struct {
	Status, Mode, Agent, Surface, Since, Q string
}

// listFilter reads the filters of q into an audit.Filter; a value the
// trail does not know is an error naming the field.
func (s *Server) listFilter(q url.Values) (audit.Filter, filterForm, error) {
	form := filterForm{Status: q.Get("status"), Mode: q.Get("mode"), Agent: q.Get("agent"),
		Surface: q.Get("surface"), Since: q.Get("since"), Q: q.Get("q")}
	f := audit.Filter{Status: form.Status, SandboxMode: form.Mode, Agent: form.Agent, Surface: form.Surface, Grep: form.Q, Limit: pageSize, Calls: true}
	var errs []error
	check := func(field, v string, known []string) {
		if v != "" && !slices.Contains(known, v) {
			errs = append(errs, fmt.Errorf("%s: %q is not one of %s", field, v, strings.Join(known, ", ")))
		}
	}
	check("status", form.Status, audit.Statuses)
	check("sandbox mode", form.Mode, audit.Modes)
	check("surface", form.Surface, audit.Surfaces)
	if form.Since != "" {
		t, err := audit.ParseSince(form.Since, s.opts.Now())
		if err != nil {
			errs = append(errs, fmt.Errorf("since: %w", err))
		}
		f.Since = t
	}
	var err error
	if f.Before, err = audit.ParseCursor(q.Get("before")); err != nil {
		errs = append(errs, fmt.Errorf("before: %w", err))
	}
	if f.After, err = audit.ParseCursor(q.Get("after")); err != nil {
		errs = append(errs, fmt.Errorf("after: %w", err))
	}
	return f, form, errors.Join(errs...)
}

// listView is the executions page.
type listView struct {
	Filter   filterForm
	Statuses []string
	Modes    []string
	Surfaces []string
	Rows     []Row
	Error    string
	// Live is set on the first page: new rows are added as they come.
	Live bool
	// Newer and Older link the neighbouring pages ("" when none).
	Older, First string
}

func (s *Server) executions(w http.ResponseWriter, r *http.Request, ss *session) {
	v := listView{Statuses: audit.Statuses, Modes: audit.Modes, Surfaces: audit.Surfaces}
	f, form, err := s.listFilter(r.URL.Query())
	v.Filter = form
	f.After = audit.Cursor{}
	v.Live = f.Before.IsZero()
	code := http.StatusOK
	switch {
	case err != nil:
		v.Error, code = err.Error(), http.StatusBadRequest
	case s.opts.Trail == nil:
		v.Error = "the audit trail is not open: " + s.opts.TrailError
	default:
		es, err := s.opts.Trail.List(r.Context(), f)
		if err != nil {
			v.Error = err.Error()
			break
		}
		for i := range es {
			v.Rows = append(v.Rows, rowOf(&es[i]))
		}
		q := r.URL.Query()
		q.Del("after")
		if len(es) == pageSize {
			q.Set("before", es[len(es)-1].Cursor().String())
			v.Older = "/executions?" + q.Encode()
		}
		if !f.Before.IsZero() {
			q.Del("before")
			v.First = "/executions?" + q.Encode()
		}
	}
	s.render(w, code, "executions", "Executions", ss, v)
}

// rows answers the live script: the rows newer than after, newest first,
// as JSON.
func (s *Server) rows(w http.ResponseWriter, r *http.Request, _ *session) {
	f, _, err := s.listFilter(r.URL.Query())
	if err == nil && s.opts.Trail == nil {
		err = errors.New("the audit trail is not open")
	}
	var out struct {
		Rows  []Row  `json:"rows"`
		Error string `json:"error,omitempty"`
	}
	out.Rows = []Row{}
	if err == nil {
		f.Before = audit.Cursor{}
		var es []audit.Entry
		es, err = s.opts.Trail.List(r.Context(), f)
		for i := range es {
			out.Rows = append(out.Rows, rowOf(&es[i]))
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		out.Error = err.Error()
		w.WriteHeader(http.StatusBadRequest)
	}
	json.NewEncoder(w).Encode(out)
}

// cardView is the execution card: the card's fields and kept output
// (service/card), then the command tree.
type cardView struct {
	Ev      *api.Event
	Row     Row
	Card    card.Card
	Streams []outputView
	Verdict *audit.RowVerdict
	// VerifyError says why there is no verdict.
	VerifyError string
	// Tree is the command tree as analysis reads the command now
	// (gatehouse explain), or why there is none.
	Tree, TreeError string
}

// outputView is one stream of the stored, redacted output.
type outputView struct {
	Name, Text, Note string
	Kept             bool
}

func (s *Server) card(w http.ResponseWriter, r *http.Request, ss *session) {
	if s.opts.Trail == nil {
		s.render(w, http.StatusServiceUnavailable, "message", "No audit trail", ss, "The audit trail is not open: "+s.opts.TrailError)
		return
	}
	ctx := r.Context()
	e, err := s.opts.Trail.Get(ctx, r.PathValue("id"))
	if errors.Is(err, audit.ErrNotFound) || errors.Is(err, audit.ErrAmbiguous) {
		s.render(w, http.StatusNotFound, "message", "No such execution", ss, err.Error())
		return
	}
	if err != nil {
		s.render(w, http.StatusInternalServerError, "message", "The trail could not be read", ss, err.Error())
		return
	}
	kids, _ := s.opts.Trail.Children(ctx, e.Event.ID) // without them, the card names no execution
	v := cardView{Ev: &e.Event, Row: rowOf(e), Card: card.Build(audit.CardInput(e, kids))}
	for _, st := range v.Card.Streams {
		v.Streams = append(v.Streams, outputView{Name: st.Name, Text: string(st.Text), Note: st.Note, Kept: st.Kept})
	}
	if v.Verdict, err = s.opts.Trail.VerifyRow(ctx, e.Seq); err != nil {
		v.VerifyError = err.Error()
	}
	if e.Command != "" {
		v.Tree, err = s.opts.Service.Explain(ctx, api.ExecRequest{Command: e.Command, Cwd: e.Event.Cwd, Agent: e.Event.Agent, Surface: e.Event.Surface})
		if err != nil {
			v.TreeError = err.Error()
		}
	}
	s.render(w, http.StatusOK, "card", "Execution "+shortID(e.Event.ID), ss, v)
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
