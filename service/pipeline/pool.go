package pipeline

// This file is the warm pool (exec.sandbox.warm_pool): sandboxes the
// service starts ahead of their commands, bwrap and the init already
// running and waiting for the plan, so that a command does not wait for
// them. A warm sandbox serves one command and only one whose mount plan is
// exactly the one it was started with (the backend's Warm.Run compares
// them); it is
// then discarded and another started in the background. Everything of one
// execution (its environment, working directory, egress proxy, the guard
// and sweep over the host as it is then) comes at use; nothing of one
// execution reaches another.

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// Ways a sandbox started, on the execution card (sandbox_start).
const (
	StartWarm  = "warm"
	StartFresh = "fresh"
)

// A slotKey is whose commands a warm sandbox serves: an agent's, in its
// session's network (net) or in a network of its own (net nil).
type slotKey struct {
	agent string
	net   *sessionNet
}

// A warmSlot is one warm sandbox and what it was started with.
type warmSlot struct {
	slotKey
	// egressDir is bound at sandbox.EgressDirInSandbox: the execution's
	// proxy listens there when the command comes.
	egressDir string
	w         sandbox.Warm
	// since is when it became ready.
	since time.Time
}

// errNoWarm says why a slot could not be started.
var errNoWarm = errors.New("no warm sandbox can be started for this backend")

// pool holds an executor's warm sandboxes.
type pool struct {
	e    *Executor
	size int
	// force starts a warm sandbox for a command that finds none ready and
	// runs the command in it, so that every command takes the warm path
	// (the test suites run once this way).
	force bool
	// delay and afterEnd are refillDelay and refillAfterEnd; idle is
	// otherAgentIdle.
	delay, afterEnd, idle time.Duration

	mu  sync.Mutex
	key slotKey // whose plan the pool starts slots for: the last to run
	// ready are the slots waiting, oldest first, of any agent's plan.
	ready []*warmSlot
	// starting counts the slots being started, by whom for.
	starting map[slotKey]int
	closed   bool
	wg       sync.WaitGroup
}

// StartPool starts keeping n warm sandboxes (exec.sandbox.warm_pool) for
// agent's commands; 0 keeps none. The service calls it for the
// configuration in force and ClosePool when that is replaced.
func (e *Executor) StartPool(n int, agent string) {
	if n <= 0 {
		return
	}
	p := &pool{e: e, size: n, key: slotKey{agent: agent}, force: e.opts.TestOnlyWarmEveryCommand, delay: refillDelay, afterEnd: refillAfterEnd,
		idle: otherAgentIdle, starting: map[slotKey]int{}}
	e.pool.Store(p)
	p.fill()
}

// ClosePool discards the warm sandboxes and starts no more; executions
// running in them are not affected.
func (e *Executor) ClosePool() {
	p := e.pool.Load()
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	ready := p.ready
	p.ready = nil
	p.mu.Unlock()
	for _, s := range ready {
		s.discard()
	}
	p.wg.Wait()
}

// Pool reports the warm pool; a zero Size means there is none.
func (e *Executor) Pool() api.PoolStatus {
	p := e.pool.Load()
	if p == nil {
		return api.PoolStatus{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := api.PoolStatus{Size: p.size, Ready: len(p.ready), Agent: p.key.agent}
	var agents []string
	for _, s := range p.ready {
		st.IdleRSS += treeRSS(s.w.Pid())
		if !slices.Contains(agents, s.agent) {
			agents = append(agents, s.agent)
		}
	}
	if len(agents) > 0 {
		slices.Sort(agents)
		st.Agent = strings.Join(agents, ", ")
	}
	return st
}

// fill starts slots in the background for the agent that ran last until
// the pool is full. The pool holds slots of other agents too (a terminal's
// command between two of Claude Code's does not discard Claude Code's);
// while the agent that ran last has fewer than the pool's size, its slot
// takes the place of another agent's oldest: at once when the pool is
// full and it has none, else once that slot has waited otherAgentIdle.
// A forced pool starts none ahead: each command starts its own, in its
// own goroutine (tests change an executor's configuration between
// commands).
func (p *pool) fill() {
	p.mu.Lock()
	if p.closed || p.force {
		p.mu.Unlock()
		return
	}
	// Slots of a session network that has closed serve no one.
	var evicted []*warmSlot
	p.ready = slices.DeleteFunc(p.ready, func(s *warmSlot) bool {
		if s.net != nil && s.net.gone.Load() {
			evicted = append(evicted, s)
			return true
		}
		return false
	})
	if p.key.net != nil && p.key.net.gone.Load() {
		p.key.net = nil
	}
	own := p.starting[p.key]
	for _, s := range p.ready {
		if s.slotKey == p.key {
			own++
		}
	}
	full := len(p.ready)+p.total() >= p.size
	i := slices.IndexFunc(p.ready, func(s *warmSlot) bool { return s.slotKey != p.key })
	if i >= 0 && own < p.size && (own == 0 && full || time.Since(p.ready[i].since) >= p.idle) {
		evicted = append(evicted, p.ready[i])
		p.ready = slices.Delete(p.ready, i, i+1)
	}
	for len(p.ready)+p.total() < p.size {
		p.starting[p.key]++
		p.wg.Add(1)
		go func(k slotKey) {
			defer p.wg.Done()
			s, err := p.e.startSlot(k)
			p.mu.Lock()
			p.starting[k]--
			if err != nil || p.closed {
				p.mu.Unlock()
				if err != nil {
					p.e.opts.Logger.Warn("warm sandbox not started", "err", err)
				} else {
					s.discard()
				}
				return
			}
			s.since = time.Now()
			p.ready = append(p.ready, s)
			p.mu.Unlock()
		}(p.key)
	}
	p.mu.Unlock()
	for _, s := range evicted {
		s.discard()
	}
}

// total is the number of slots being started.
func (p *pool) total() int {
	n := 0
	for _, c := range p.starting {
		n += c
	}
	return n
}

// take returns a warm slot for req, or nil and why the command gets a
// fresh sandbox. The caller has the pool start another (refillAfter).
func (e *Executor) take(req *api.ExecRequest, sn *sessionNet, spec *sandbox.Spec, hasPins, hasCredFiles, hasMasked bool) (*warmSlot, string) {
	p := e.pool.Load()
	switch {
	case p == nil:
		return nil, "no warm pool (exec.sandbox.warm_pool is 0, or the command runs in-process)"
	case hasPins:
		return nil, "pinned scripts are bound into a fresh sandbox"
	case hasCredFiles:
		return nil, "credential files are bound into a fresh sandbox"
	case hasMasked:
		return nil, "the CA bundle of masked credentials is bound into a fresh sandbox"
	case len(spec.Stdin) > 0:
		return nil, "standard input is given to a fresh sandbox"
	case spec.ToolCache == nil && e.opts.ToolCacheRoot != "":
		return nil, "no tool cache"
	}
	p.mu.Lock()
	// The pool starts the next slots for the agent that runs now, in
	// the network it runs in.
	key := slotKey{agent: req.Agent, net: sn}
	p.key = key
	var stale []*warmSlot
	var s *warmSlot
	force := p.force
	if force {
		// A slot started now, for the plan as it is now.
		stale, p.ready = p.ready, nil
	}
	for i := 0; i < len(p.ready) && s == nil; {
		x := p.ready[i]
		if x.slotKey != key {
			i++
			continue
		}
		p.ready = slices.Delete(p.ready, i, i+1)
		if x.w.Alive() {
			s = x
		} else {
			stale = append(stale, x)
		}
	}
	p.mu.Unlock()
	for _, x := range stale {
		x.discard()
	}
	if s == nil && force {
		var err error
		if s, err = e.startSlot(key); err != nil {
			return nil, "no warm sandbox could be started: " + err.Error()
		}
	}
	if s == nil && sn != nil {
		return nil, "no warm sandbox was ready for " + req.Agent + " in its session's network"
	}
	if s == nil {
		return nil, "no warm sandbox was ready for " + req.Agent
	}
	return s, ""
}

// planChanged discards every ready slot: they were started with the plan
// a command just found changed (a repository appeared, a root moved).
func (e *Executor) planChanged() {
	p := e.pool.Load()
	if p == nil {
		return
	}
	p.mu.Lock()
	stale := p.ready
	p.ready = nil
	p.mu.Unlock()
	for _, s := range stale {
		s.discard()
	}
	p.fill()
}

// runIn runs spec in slot when there is one and it takes spec's mount
// plan, else in a fresh sandbox; the event says which, and why fresh.
func (e *Executor) runIn(ctx context.Context, slot *warmSlot, choice backendChoice, spec *sandbox.Spec, out sandbox.Streams, ev *api.Event) *sandbox.Result {
	if slot != nil {
		res, err := slot.w.Run(ctx, spec, out)
		if err == nil {
			ev.SandboxStart, ev.SandboxStartReason = StartWarm, ""
			explainMismatch(res, spec.InitPath)
			return res
		}
		ev.SandboxStartReason = err.Error()
		if errors.Is(err, sandbox.ErrPlanChanged) {
			e.planChanged()
		}
	}
	return runFresh(ctx, choice, spec, out)
}

// discard ends the slot's sandbox unless its command ran there, and
// frees what it held.
func (s *warmSlot) discard() {
	s.w.Close()
	os.RemoveAll(s.egressDir)
}

// treeRSS is the resident memory of pid and its descendants, in bytes
// (Linux /proc; 0 elsewhere).
func treeRSS(pid int) int64 {
	var total int64
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			total += kb << 10
		}
	}
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, t := range tasks {
		kids, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		for _, k := range strings.Fields(string(kids)) {
			if c, err := strconv.Atoi(k); err == nil {
				total += treeRSS(c)
			}
		}
	}
	return total
}

// When a command took a warm sandbox, the pool starts its replacement
// once the command has ended and its caller has had the result
// (refillAfterEnd later), or refillDelay after it started if it runs
// long. Starting bwrap and the init costs as much CPU as the command's
// own start; on a laptop with two cores the two would compete.
const (
	refillDelay    = 100 * time.Millisecond
	refillAfterEnd = 10 * time.Millisecond
)

// otherAgentIdle is how long another agent's ready slot keeps its place
// when the agent running now could use it (fill).
const otherAgentIdle = time.Minute

// refillAfter fills the pool after the pool's delay, or its after-end
// delay once the returned function is called (the command ended),
// whichever comes first.
func (e *Executor) refillAfter() func() {
	p := e.pool.Load()
	if p == nil {
		return func() {}
	}
	t := time.AfterFunc(p.delay, p.fill)
	return func() {
		if t.Stop() {
			time.AfterFunc(p.afterEnd, p.fill)
		}
	}
}
