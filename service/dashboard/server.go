// Package dashboard is Gatehouse's local web dashboard: the executions and
// their cards, approvals, workspaces, the agent sessions' networks and
// their ports, the policy in force and doctor, served by the user service
// on 127.0.0.1 (docs/dashboard.md).
//
// # Who may use it
//
// Any local process, and any web page the user visits, can reach a port on
// 127.0.0.1, so every request must prove it comes from the user's own
// browser, through this dashboard's own pages:
//
//   - The Host header must be exactly 127.0.0.1:PORT or localhost:PORT,
//     else 421: a page on another name that resolves here (DNS rebinding)
//     gets nothing.
//   - A page needs a session: a cookie (HttpOnly, SameSite=Strict) the
//     browser gets by posting a one-time login code, which only the user
//     can get from the service's socket (gatehouse dashboard, the tray).
//     A code works once, for five minutes; sessions live in memory and
//     end with the service. A code never rides an address or an argument
//     list (which every local user reads in /proc): the opener is handed
//     a sign-in page in a directory only the user enters, which posts the
//     code, or the user types the code the terminal shows (login.go).
//   - A request that changes anything is a POST with the session, an
//     Origin header naming this dashboard's own origin, and the session's
//     CSRF token; anything else is refused 403.
//   - Every answer carries a Content-Security-Policy of default-src 'self'
//     with no inline script or style, forbids framing and sends no
//     referrer. Everything the pages use is embedded (assets/dashboard).
//   - What agents wrote (commands, output, reasons) is text: the templates
//     escape it as HTML, terminal controls and bidi overrides are shown
//     escaped (service/termesc), and the script sets it with textContent.
package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/localserver"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// Service is what the dashboard shows and answers through: the same
// functions the admission API calls. *service.Service implements it.
type Service interface {
	Approvals() []api.Approval
	Answer(req api.AnswerRequest) api.AnswerResponse
	Subscribe(ctx context.Context) ([]api.StreamNotice, <-chan api.StreamNotice)
	Workspaces() []api.Workspace
	// AddWorkspace trusts dir, refusing what gatehouse workspace add
	// refuses; RemoveWorkspace stops trusting it.
	AddWorkspace(dir, by string) (string, error)
	RemoveWorkspace(dir string) error
	// Config is the configuration in force.
	Config() *policy.Loaded
	// Explain returns gatehouse explain's text for req: the command
	// tree as analysis reads it now. Nothing runs.
	Explain(ctx context.Context, req api.ExecRequest) (string, error)
	// Ports lists the agent sessions' shared networks; OpenPort forwards
	// a session's port to this machine's loopback and ClosePort ends a
	// forward (a refusal is a response with its error).
	Ports() []api.SessionNetwork
	OpenPort(req api.PortRequest) api.PortResponse
	ClosePort(req api.PortRequest) api.PortResponse
}

// Trail is the audit trail the executions come from; *audit.Store
// implements it.
type Trail interface {
	List(ctx context.Context, f audit.Filter) ([]audit.Entry, error)
	Get(ctx context.Context, id string) (*audit.Entry, error)
	Children(ctx context.Context, id string) ([]api.Event, error)
	VerifyRow(ctx context.Context, seq int64) (*audit.RowVerdict, error)
}

// Options configure a Server. Service is required.
type Options struct {
	Service Service
	// Trail is the audit trail; nil shows TrailError in its place.
	Trail      Trail
	TrailError string
	// Doctor runs gatehouse doctor and returns its report (the service's
	// Doctor, what GET /v1/doctor serves); nil shows none.
	Doctor func(ctx context.Context) (*api.DoctorReport, error)
	Logger *slog.Logger
	// Now returns the current time; tests replace it.
	Now func() time.Time
	// LaunchDir is where Login writes its sign-in pages: a directory
	// only this user may enter (made 0700; an existing one must belong
	// to the user). "" writes none.
	LaunchDir string
}

// Lifetimes of the secrets.
const (
	codeTTL    = 5 * time.Minute
	sessionTTL = 12 * time.Hour
	maxCodes   = 16
	maxSession = 64
	cookieName = "gatehouse_session"
)

// A Server is the dashboard. It is safe for concurrent use; Serve runs it
// once.
type Server struct {
	opts Options
	log  *slog.Logger
	port atomic.Int32
	l    atomic.Pointer[net.Listener]
	tmpl *templates

	mu       sync.Mutex
	codes    map[[32]byte]loginCode // hashes of login codes → their expiry and page
	sessions map[[32]byte]*session  // hashes of cookies → session
}

// A session is one signed-in browser.
type session struct {
	csrf    string
	expires time.Time
	flash   string // shown once, on the next page
}

// New returns a dashboard for opts.
func New(opts Options) (*Server, error) {
	if opts.Service == nil {
		return nil, errors.New("dashboard: no service")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	return &Server{opts: opts, log: opts.Logger, tmpl: t,
		codes: map[[32]byte]loginCode{}, sessions: map[[32]byte]*session{}}, nil
}

// Listen takes l, which must be a TCP listener on a loopback address, for
// Serve; from then on Login works.
func (s *Server) Listen(l net.Listener) error {
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok || !addr.IP.IsLoopback() {
		l.Close()
		return fmt.Errorf("dashboard: %s is not a loopback TCP address", l.Addr())
	}
	if !s.l.CompareAndSwap(nil, &l) {
		l.Close()
		return errors.New("dashboard: already listening")
	}
	s.port.Store(int32(addr.Port))
	return nil
}

// Serve serves the dashboard on the listener Listen took, until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	lp := s.l.Load()
	if lp == nil {
		return errors.New("dashboard: Serve before Listen")
	}
	l := *lp
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		// Requests end with ctx: the live streams among them.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	})
	defer stop()
	defer s.dropCodes() // their sign-in pages go with the service
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Port is the port Listen took; 0 before.
func (s *Server) Port() int { return int(s.port.Load()) }

// secret returns 32 random bytes, base64url.
func secret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Handler returns the dashboard's handler, with every check of the
// package comment in front of it.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.login)
	mux.Handle("GET /static/", staticHandler())
	page := func(pattern string, h func(http.ResponseWriter, *http.Request, *session)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { s.withSession(w, r, h) })
	}
	page("GET /{$}", func(w http.ResponseWriter, r *http.Request, _ *session) {
		http.Redirect(w, r, "/executions", http.StatusSeeOther)
	})
	page("GET /executions", s.executions)
	page("GET /executions/rows", s.rows)
	page("GET /executions/{id}", s.card)
	page("GET /approvals", s.approvals)
	page("POST /approvals/answer", s.answer)
	page("GET /workspaces", s.workspaces)
	page("POST /workspaces/add", s.addWorkspace)
	page("POST /workspaces/remove", s.removeWorkspace)
	page("GET /sessions", s.sessionsPage)
	page("GET /sessions/state", s.sessionsStateJSON)
	page("POST /sessions/open", s.openPort)
	page("POST /sessions/close", s.closePort)
	page("GET /policy", s.policy)
	page("GET /doctor", s.doctor)
	page("GET /stream", s.stream)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "+
			"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin") // no-referrer would make Chromium send Origin: null on the forms
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if !s.hostOK(r.Host) {
			http.Error(w, "refused: this dashboard answers only to 127.0.0.1:PORT or localhost:PORT", http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// hostOK reports whether host names this dashboard exactly.
func (s *Server) hostOK(host string) bool {
	port := strconv.Itoa(s.Port())
	return host == "127.0.0.1:"+port || host == "localhost:"+port
}

// withSession calls h with the request's session, or refuses: no valid
// cookie is 401; a POST without this origin and the session's CSRF token
// is 403.
func (s *Server) withSession(w http.ResponseWriter, r *http.Request, h func(http.ResponseWriter, *http.Request, *session)) {
	c, err := r.Cookie(cookieName)
	var ss *session
	if err == nil {
		k := sha256.Sum256([]byte(c.Value))
		s.mu.Lock()
		ss = s.sessions[k]
		if ss != nil && s.opts.Now().After(ss.expires) {
			delete(s.sessions, k)
			ss = nil
		}
		s.mu.Unlock()
	}
	if ss == nil {
		s.message(w, http.StatusUnauthorized, "Sign in to the dashboard",
			"Run gatehouse dashboard (or use Open dashboard in the tray): it opens a page that signs in with a one-time login code, and prints the code for the form at /login.")
		return
	}
	if r.Method == http.MethodPost {
		if o := r.Header.Get("Origin"); o != "http://"+r.Host {
			s.message(w, http.StatusForbidden, "Refused", "A change must come from this dashboard's own pages (the Origin header does not name them).")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		tok := r.PostFormValue("csrf")
		if subtle.ConstantTimeCompare([]byte(tok), []byte(ss.csrf)) != 1 {
			s.message(w, http.StatusForbidden, "Refused", "The form's token is missing or stale: reload the page and try again.")
			return
		}
	}
	h(w, r, ss)
}

// setFlash keeps msg to show on the session's next page.
func (s *Server) setFlash(ss *session, msg string) {
	s.mu.Lock()
	ss.flash = msg
	s.mu.Unlock()
}

// takeFlash returns the session's message, once.
func (s *Server) takeFlash(ss *session) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := ss.flash
	ss.flash = ""
	return m
}

// stream is the live stream, as the admission API serves it.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, _ *session) {
	first, rest := s.opts.Service.Subscribe(r.Context())
	localserver.ServeStream(w, first, rest)
}
