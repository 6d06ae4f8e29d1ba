package cli

// This file is `gatehouse ports`: the agent sessions' shared networks, what
// listens in each, and the ports the person opens on the host's loopback
// (docs/executor.md, "One network per agent session"). The service holds
// the networks and the forwards and says why it refuses one; this face
// parses its arguments, asks, and prints what it was handed.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

var portsCmd = &command{name: "ports",
	summary: "list what agent sessions serve, or open one of their ports on this machine (ports open|close)",
	usage:   portsUsage,
	bare:    "list",
	subs: []*command{
		{name: "ports list", aliases: []string{"ls"}, usage: "usage: gatehouse ports [list] [--json]", flags: portsList},
		{name: "ports open", usage: "usage: gatehouse ports open SESSION PORT [--agent AGENT]", interspersed: true,
			flags: func(fl *flag.FlagSet) runFunc { return portsForward(fl, true) }},
		{name: "ports close", usage: "usage: gatehouse ports close SESSION PORT [--agent AGENT]", interspersed: true,
			flags: func(fl *flag.FlagSet) runFunc { return portsForward(fl, false) }},
	},
}

const portsUsage = `usage:
  gatehouse ports [--json]                           the session networks: what listens, the forwards
  gatehouse ports open SESSION PORT [--agent AGENT]  open PORT of SESSION on this machine's 127.0.0.1
  gatehouse ports close SESSION PORT [--agent AGENT] close that forward

The commands of one agent session (Claude Code's session, one MCP
connection, gatehouse exec --session ID) share a network: what one command
serves on localhost, the session's next commands reach. Nothing else does,
this machine included, until you open the port: the forward listens on
127.0.0.1 only, on PORT when it is free there, else on the next free port,
and closes on ports close or with the session (its network closes after
exec.sandbox.session_idle_seconds with nothing running in it). SESSION is
a session's id or the start of one; --agent picks between two agents'
sessions. Only a person opens a port: no agent's tool offers it. The
service must be running.`

func portsList(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("ports: unexpected argument %q; usage: gatehouse ports [--json], or ports open|close SESSION PORT", args[0])
		}
		c, err := runningService(env)
		if err != nil {
			return err
		}
		ss, err := c.Ports(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			auditJSON(env.Stdout, api.PortsResponse{Sessions: nonNilSlice(ss)})
			return nil
		}
		if len(ss) == 0 {
			fmt.Fprintln(env.Stdout, "no session networks: an agent session's first command starts one (Claude Code's session, an MCP connection, gatehouse exec --session ID)")
			return nil
		}
		for _, s := range ss {
			printSessionNetwork(env.Stdout, s)
		}
		return nil
	}
}

// printSessionNetwork prints one session's network as a block a person
// reads. The agent and the session id come from the agent: each is one
// escaped line (termesc.Line).
func printSessionNetwork(w io.Writer, s api.SessionNetwork) {
	state := fmt.Sprintf("%d running", s.Running)
	if s.Running == 0 {
		state = "nothing running, idle since " + s.LastUsed.Local().Format(time.DateTime)
	}
	fmt.Fprintf(w, "session %s  agent %s, since %s, %s\n", termesc.Line(s.SessionID), termesc.Line(s.Agent),
		s.Since.Local().Format(time.DateTime), state)
	if len(s.Listening) == 0 {
		fmt.Fprintln(w, "  listening: nothing")
	}
	for _, l := range s.Listening {
		fmt.Fprintf(w, "  listening: %d on %s\n", l.Port, termesc.Line(l.Addr))
	}
	for _, f := range s.Forwards {
		fmt.Fprintf(w, "  forward:   %d → %s (opened by %s at %s)\n", f.Port, hostURL(f.HostPort),
			termesc.Line(orDash(f.By)), f.Since.Local().Format(time.DateTime))
	}
}

// hostURL is where the host's browser opens a forward.
func hostURL(port int) string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + "/"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// portsForward is the run of ports open (open) and ports close.
func portsForward(fl *flag.FlagSet, open bool) runFunc {
	agent := fl.String("agent", "", "")
	name := "ports close"
	if open {
		name = "ports open"
	}
	return func(ctx context.Context, env *Env, args []string) error {
		req, err := portRequest(name, args)
		if err != nil {
			return err
		}
		req.Agent = *agent
		c, err := runningService(env)
		if err != nil {
			return err
		}
		call := c.ClosePort
		if open {
			call = c.OpenPort
		}
		f, err := call(ctx, req)
		if err != nil {
			return fmt.Errorf("%s %s %d: %w", name, termesc.Line(req.SessionID), req.Port, err)
		}
		if f == nil {
			return fmt.Errorf("%s %s %d: the service answered with no forward", name, termesc.Line(req.SessionID), req.Port)
		}
		if !open {
			fmt.Fprintf(env.Stdout, "closed session %s port %d (was %s)\n", termesc.Line(f.SessionID), f.Port, hostURL(f.HostPort))
			return nil
		}
		fmt.Fprintf(env.Stdout, "session %s port %d → %s (host)\n", termesc.Line(f.SessionID), f.Port, hostURL(f.HostPort))
		if f.HostPort != f.Port {
			fmt.Fprintf(env.Stdout, "port %d was taken on this machine; the forward listens on %d\n", f.Port, f.HostPort)
		}
		return nil
	}
}

// portRequest parses SESSION PORT, the arguments of ports open and close.
func portRequest(name string, args []string) (api.PortRequest, error) {
	u := "usage: gatehouse " + name + " SESSION PORT [--agent AGENT]"
	switch {
	case len(args) == 0 || args[0] == "":
		return api.PortRequest{}, usagef("%s: missing SESSION (gatehouse ports lists the sessions); %s", name, u)
	case len(args) == 1:
		return api.PortRequest{}, usagef("%s: missing PORT; %s", name, u)
	case len(args) > 2:
		return api.PortRequest{}, usagef("%s: unexpected argument %q; %s", name, args[2], u)
	}
	port, err := strconv.Atoi(args[1])
	if err != nil || port < 1 || port > 65535 || strings.HasPrefix(args[1], "+") {
		return api.PortRequest{}, usagef("%s: PORT: %q is not a port number from 1 to 65535", name, args[1])
	}
	return api.PortRequest{SessionID: args[0], Port: port, By: api.ByCLI}, nil
}
