// Package relay is the process Claude Code runs in place of a routed
// command: it redeems the command's ticket with the Gatehouse service
// through the ticket's FIFOs (it needs no socket, which Claude Code's
// sandbox forbids), copies the command's output to its own as it arrives,
// and exits with the command's status.
package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// openTimeout bounds the wait for the service to answer on the out-FIFO.
const openTimeout = 10 * time.Second

// Run redeems ticket through the FIFOs in dir and returns the exit status:
// the command's own, 124 on timeout, 137 when it was killed, 126 when it
// could not start or the ticket is malformed, unknown, used or expired
// (one line on stderr says which).
func Run(ctx context.Context, dir, ticket string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "gatehouse relay: error: "+format+"\n", a...)
		return api.ExitCannotRun
	}
	if !api.ValidTicket(ticket) {
		return fail("%v", api.ErrMalformedTicket)
	}
	name := api.RelayName(ticket)
	in, err := openIn(filepath.Join(dir, api.RelayInName(name)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("%s", missing(dir, name))
	case errors.Is(err, errNoReader):
		return fail("the Gatehouse service is not waiting for this ticket (it stopped or restarted since the hook ran); start it with 'gatehouse service start'")
	case err != nil:
		return fail("opening the relay FIFO: %v", err)
	}
	// in stays open until this process exits: the service reads end of
	// file there as "the relay is gone" and kills the command.
	defer in.Close()
	req, _ := json.Marshal(api.RelayRequest{Ticket: ticket, PID: os.Getpid()})
	if _, err := in.Write(append(req, '\n')); err != nil {
		return fail("writing to the relay FIFO: %v", err)
	}
	out, err := openOut(ctx, filepath.Join(dir, api.RelayOutName(name)), openTimeout)
	if err != nil {
		return fail("the Gatehouse service did not answer on the relay FIFO: %v", err)
	}
	defer out.Close()
	end, err := api.ReadStream(out, stdout, stderr)
	if err != nil {
		return fail("lost the Gatehouse service mid-command: %v", err)
	}
	if e := end.Error; e != nil {
		msg := e.Message
		if e.Kind == api.ErrDenied && e.BlockedBy != "" {
			msg = "denied: " + e.BlockedBy + ": " + msg
		}
		fmt.Fprintf(stderr, "gatehouse relay: %s\n", strings.TrimSpace(msg))
		if e.Hint != "" {
			fmt.Fprintf(stderr, "gatehouse relay: hint: %s\n", strings.TrimSpace(e.Hint))
		}
	} else if end.Result != nil && end.Result.TimedOut {
		fmt.Fprintf(stderr, "gatehouse: timed out after %d s\n", end.Result.TimeoutSeconds)
	}
	if end.Warning != "" {
		fmt.Fprintf(stderr, "gatehouse relay: warning: %s\n", strings.TrimSpace(end.Warning))
	}
	return end.Exit
}

// missing explains a ticket whose in-FIFO does not exist: used or expired
// (its tombstone says which), or never issued here.
func missing(dir, name string) string {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Sprintf("the relay directory %s does not exist: the Gatehouse service is not running here; start it with 'gatehouse service start'", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, api.RelayGoneName(name)))
	if err == nil {
		switch strings.TrimSpace(string(b)) {
		case api.RelayGoneUsed:
			return api.ErrUsedTicket.Error()
		case api.RelayGoneExpired:
			return api.ErrExpiredTicket.Error()
		}
	}
	return fmt.Sprintf("%v: no relay FIFO %s", api.ErrUnknownTicket, filepath.Join(dir, api.RelayInName(name)))
}
