package dashboard

// This file signs a browser in. A login code is a bearer secret for
// twelve hours of the dashboard (approving, trusting, reading every
// output), so it never rides an address: an address handed to an opener
// or a browser stays in its argument list, which every local user reads
// in /proc/PID/cmdline, and the first to post the code gets the session.
// Instead:
//
//   - Login writes a sign-in page, 0600 in a directory only the user
//     enters (Options.LaunchDir, under $XDG_RUNTIME_DIR), whose form
//     posts the code to /login as soon as a browser opens it; the opener
//     gets the page's path, which holds nothing secret. The page is
//     removed when its code is spent or expires, and when the service
//     stops.
//   - GET /login is a form for the code gatehouse dashboard prints, for a
//     browser that cannot open the page (one confined by snap or
//     flatpak). A code in the address is not taken.
//   - POST /login takes the code from the page (Origin null: a file's
//     origin is opaque) or from the form (this dashboard's origin), and
//     from nowhere else.

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/socket"
)

// A loginCode is a code not yet spent: when it expires, and the sign-in
// page written for it ("" for none).
type loginCode struct {
	expires time.Time
	page    string
}

// Login returns a new one-time login code, the address of the sign-in
// form (which holds no secret) and, with Options.LaunchDir, the path of
// a page that posts the code when a browser opens it. Hand an opener
// that path, never an address with the code in it.
func (s *Server) Login() (api.DashboardLoginResponse, error) {
	port := s.Port()
	if port == 0 {
		return api.DashboardLoginResponse{}, errors.New("the dashboard is not listening yet")
	}
	code := secret()
	action := fmt.Sprintf("http://127.0.0.1:%d/login", port)
	var page string
	if dir := s.opts.LaunchDir; dir != "" {
		var err error
		if page, err = writeLaunchPage(dir, action, code); err != nil {
			return api.DashboardLoginResponse{}, fmt.Errorf("writing the sign-in page in %s: %w", dir, err)
		}
		// Its page goes when the code expires, whatever comes next.
		time.AfterFunc(codeTTL+time.Second, func() {
			s.mu.Lock()
			expired := s.pruneLocked(false)
			s.mu.Unlock()
			removePages(expired...)
		})
	}
	s.mu.Lock()
	dropped := s.pruneLocked(true)
	s.codes[sha256.Sum256([]byte(code))] = loginCode{expires: s.opts.Now().Add(codeTTL), page: page}
	s.mu.Unlock()
	removePages(dropped...)
	return api.DashboardLoginResponse{URL: action, Code: code, LaunchFile: page}, nil
}

// pruneLocked forgets the expired codes and, when room says so, the
// oldest beyond maxCodes-1 (room for one more), and returns their pages.
// s.mu is held.
func (s *Server) pruneLocked(room bool) (pages []string) {
	now := s.opts.Now()
	for h, c := range s.codes {
		if now.After(c.expires) {
			delete(s.codes, h)
			pages = append(pages, c.page)
		}
	}
	for room && len(s.codes) >= maxCodes { // the oldest goes first
		var oldest [32]byte
		first := true
		for h, c := range s.codes {
			if first || c.expires.Before(s.codes[oldest].expires) {
				oldest, first = h, false
			}
		}
		pages = append(pages, s.codes[oldest].page)
		delete(s.codes, oldest)
	}
	return pages
}

// dropCodes forgets every code and removes their pages.
func (s *Server) dropCodes() {
	var pages []string
	s.mu.Lock()
	for h, c := range s.codes {
		pages = append(pages, c.page)
		delete(s.codes, h)
	}
	s.mu.Unlock()
	removePages(pages...)
}

// removePages removes sign-in pages. They lie in LaunchDir, which only
// this user enters and no sandbox sees (the sandbox's /run is its own).
func removePages(pages ...string) {
	for _, p := range pages {
		if p != "" {
			os.Remove(p) // a page that stays holds a code that no longer works
		}
	}
}

// writeLaunchPage writes, in dir, a page that posts code to action, and
// returns its path. The file is new (O_EXCL: nothing that was there is
// followed or reused) and 0600; dir is made 0700, and an existing dir
// must be this user's own directory, not a link.
func writeLaunchPage(dir, action, code string) (string, error) {
	if err := socket.PrivateDir(dir, 0o700); err != nil {
		return "", err
	}
	name := filepath.Join(dir, "login-"+secret()[:16]+".html")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	err = launchPage().Execute(f, struct{ Action, Code string }{action, code})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// launchPage is the sign-in page Login writes. It is a file the browser
// opens, not a page the dashboard serves: its one inline script (which
// submits the form) is under no policy of the dashboard's, and the
// button does the same by hand where scripts are off.
var launchPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("launch").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<title>Gatehouse dashboard</title>
</head>
<body>
<form method="post" action="{{.Action}}">
<input type="hidden" name="code" value="{{.Code}}">
<p>Signing in to the Gatehouse dashboard… <button type="submit">Sign in</button></p>
</form>
<script>document.forms[0].submit();</script>
</body>
</html>
`))
})

// loginPage is the form for a code typed or pasted. A code in the
// address is not taken: it stays unspent, and the form is shown.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "login", "Sign in", nil, "")
}

// login exchanges a posted code for a session. It answers with a page
// that moves on to the executions by itself: a redirect after a post
// from the sign-in file would still be a cross-site navigation, with
// which the browser does not send the SameSite=Strict cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "null" && o != "http://"+r.Host {
		s.message(w, http.StatusForbidden, "Refused",
			"A login code is taken from the dashboard's sign-in page or its own form only (the Origin header names neither).")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	cookie, ok := s.redeem(strings.TrimSpace(r.PostFormValue("code")))
	if !ok {
		s.render(w, http.StatusForbidden, "login", "This login code does not work", nil,
			"A login code works once, for five minutes. Run gatehouse dashboard (or use Open dashboard in the tray) for a new one.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: cookie, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(sessionTTL / time.Second)})
	s.render(w, http.StatusOK, "signedin", "Signed in", nil, nil)
}

// redeem spends code and returns a new session's cookie; false when the
// code is unknown, spent or expired, or there are sessions enough.
func (s *Server) redeem(code string) (cookie string, ok bool) {
	if code == "" {
		return "", false
	}
	h := sha256.Sum256([]byte(code))
	now := s.opts.Now()
	s.mu.Lock()
	c, ok := s.codes[h]
	delete(s.codes, h)
	if ok && now.After(c.expires) {
		ok = false
	}
	if ok {
		for k, ss := range s.sessions {
			if now.After(ss.expires) {
				delete(s.sessions, k)
			}
		}
		if len(s.sessions) >= maxSession {
			ok = false
		} else {
			cookie = secret()
			s.sessions[sha256.Sum256([]byte(cookie))] = &session{csrf: secret(), expires: now.Add(sessionTTL)}
		}
	}
	s.mu.Unlock()
	removePages(c.page)
	return cookie, ok
}
