package dashboard

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/assets"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

// templates are the pages, each parsed with the layout (html/template:
// every value is escaped for where it lands).
type templates struct {
	pages map[string]*template.Template
}

// pageNames are the pages under assets/dashboard, without ".html".
var pageNames = []string{"executions", "card", "approvals", "workspaces", "sessions", "policy", "doctor", "message", "login", "signedin"}

var funcs = template.FuncMap{
	// text shows terminal controls, bidi overrides and invisible
	// characters escaped (\x1b, \u202e); html/template escapes the rest.
	"text": termesc.String,
	// line is text for one line or a heading: a tab or a newline shows
	// as \t, \n too.
	"line": termesc.Line,
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
	"join": strings.Join,
	"dash": func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	},
	"yesno": func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	},
}

func parseTemplates() (*templates, error) {
	t := &templates{pages: map[string]*template.Template{}}
	for _, name := range pageNames {
		p, err := template.New("layout.html").Funcs(funcs).ParseFS(assets.Dashboard, "dashboard/layout.html", "dashboard/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard: %w", err)
		}
		t.pages[name] = p
	}
	return t, nil
}

// A view is what every page gets: its own data, and the frame's.
type view struct {
	Title string
	Nav   string // the page the navigation marks
	CSRF  string
	Flash string
	Data  any
}

// render writes page with data; ss is nil on pages without a session.
func (s *Server) render(w http.ResponseWriter, code int, page, title string, ss *session, data any) {
	v := view{Title: title, Nav: page, Data: data}
	if ss != nil {
		v.CSRF = ss.csrf
		v.Flash = s.takeFlash(ss)
	}
	var b bytes.Buffer
	if err := s.tmpl.pages[page].Execute(&b, v); err != nil {
		s.log.Error("dashboard: rendering", "page", page, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// message is a page with one message and no session.
func (s *Server) message(w http.ResponseWriter, code int, title, text string) {
	s.render(w, code, "message", title, nil, text)
}

// staticHandler serves the script and the style sheet.
func staticHandler() http.Handler {
	sub, err := fs.Sub(assets.Dashboard, "dashboard/static")
	if err != nil {
		panic(err)
	}
	return http.StripPrefix("/static/", http.FileServerFS(sub))
}
