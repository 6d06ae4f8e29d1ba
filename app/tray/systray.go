//go:build cgo || !darwin

package tray

// The binding of the menu to fyne.io/systray. systray's menu is a fixed
// set of items made once: every item the menu can show is allocated when
// the tray starts (the caps in model.go), and each change of state shows,
// hides and relabels them. Only the render goroutine touches the items.

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"time"

	"fyne.io/systray"
	"github.com/gatehouse-dev/gatehouse/assets"
)

// Run shows the tray until ctx ends or Quit is clicked.
func Run(ctx context.Context, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := newApp(opts)
	a.quit = systray.Quit
	dark := opts.Theme == "dark" || opts.Theme == "" && desktopPrefersDark(ctx)
	if runtime.GOOS != "darwin" {
		// The status-notifier item's title (on macOS it would be text in
		// the menu bar).
		systray.SetTitle("Gatehouse")
	}
	context.AfterFunc(ctx, systray.Quit)
	systray.Run(func() {
		b := newBinding(ctx, a, dark)
		go a.connect(ctx)
		go b.loop(ctx)
	}, cancel)
	return nil
}

// binding holds the allocated items.
type binding struct {
	a    *app
	dark bool
	top  []*slot // one per top-level item of Menu, nil for a separator
	// icon is the icon file shown now.
	icon string

	mu sync.Mutex // guards every slot's action
	// approvalOf maps an approval's id to the slot of the approvals'
	// submenu that shows it, and freed lists the free ones, longest free
	// first: a request keeps its place while it waits, and a place is
	// given again as late as can be, so a click meant for one request
	// lands on another as rarely as possible.
	approvalOf map[string]*slot
	freed      []*slot
}

// A slot is one allocated menu item and what it shows.
type slot struct {
	mi       *systray.MenuItem
	children []*slot
	label    string
	tooltip  string
	disabled bool
	hidden   bool
	action   Action
}

func newBinding(ctx context.Context, a *app, dark bool) *binding {
	b := &binding{a: a, dark: dark, approvalOf: map[string]*slot{}}
	for _, it := range Menu(State{}, time.Now()) {
		if it.Separator {
			systray.AddSeparator()
			b.top = append(b.top, nil)
			continue
		}
		s := b.add(ctx, systray.AddMenuItem(it.Label, ""))
		switch it.Key {
		case KeyApprovals:
			for i := range MaxApprovals + 1 {
				c := b.add(ctx, s.mi.AddSubMenuItem("", ""))
				s.children = append(s.children, c)
				if i == MaxApprovals {
					break // the line saying how many more wait
				}
				for _, sub := range approvalShape() {
					gc := b.add(ctx, c.mi.AddSubMenuItem("", ""))
					if sub {
						gc.children = b.addChildren(ctx, gc, pickItems)
					}
					c.children = append(c.children, gc)
				}
				b.freed = append(b.freed, c)
			}
		case KeyRecent:
			s.children = b.addChildren(ctx, s, MaxRecent)
		case KeyWorkspaces:
			s.children = b.addChildren(ctx, s, MaxWorkspaces+1)
		case KeySessions:
			// A submenu per session, then the line saying how many more.
			s.children = b.addChildren(ctx, s, MaxSessions+1)
			for _, c := range s.children[:MaxSessions] {
				c.children = b.addChildren(ctx, c, sessionItems)
			}
		}
		b.top = append(b.top, s)
	}
	b.render()
	return b
}

func (b *binding) addChildren(ctx context.Context, parent *slot, n int) []*slot {
	out := make([]*slot, n)
	for i := range out {
		out[i] = b.add(ctx, parent.mi.AddSubMenuItem("", ""))
	}
	return out
}

// add wraps mi in a slot and follows its clicks. systray drops a click
// that finds no one receiving, so each item has its own receiver, which
// hands the action on at once.
func (b *binding) add(ctx context.Context, mi *systray.MenuItem) *slot {
	s := &slot{mi: mi}
	go func() {
		for range mi.ClickedCh {
			b.mu.Lock()
			act := s.action
			b.mu.Unlock()
			if act.Kind != ActNone {
				go b.a.do(ctx, act)
			}
		}
	}()
	return s
}

// loop renders each change of state, and once a minute for the ages.
func (b *binding) loop(ctx context.Context) {
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.a.changed:
		case <-tick.C:
		}
		b.render()
	}
}

// render shows the menu of the state now.
func (b *binding) render() {
	s := b.a.snapshot()
	icon, badge := IconOf(s)
	if f := IconFile(icon, badge, b.dark); f != b.icon {
		if data, err := assets.TrayIcons.ReadFile(f); err == nil {
			systray.SetIcon(data)
			b.icon = f
		}
	}
	systray.SetTooltip(Tooltip(s))
	for i, it := range Menu(s, time.Now()) {
		sl := b.top[i]
		if sl == nil {
			continue
		}
		b.set(sl, it)
		if it.Key == KeyApprovals {
			b.setApprovals(sl, s, it.Children)
			continue
		}
		b.setChildren(sl.children, it.Children)
	}
}

// setApprovals gives each pending request its slot (keeping the one it
// had) and hides the rest.
func (b *binding) setApprovals(parent *slot, s State, items []Item) {
	pending := map[string]bool{}
	for _, a := range s.Approvals {
		pending[a.ID] = true
	}
	for id, sl := range b.approvalOf {
		if !pending[id] {
			delete(b.approvalOf, id)
			b.freed = append(b.freed, sl)
		}
	}
	used := map[*slot]bool{}
	for i, it := range items {
		if i == MaxApprovals {
			b.set(parent.children[MaxApprovals], it)
			used[parent.children[MaxApprovals]] = true
			break
		}
		id := s.Approvals[i].ID
		sl, ok := b.approvalOf[id]
		if !ok {
			sl, b.freed = b.freed[0], b.freed[1:]
			b.approvalOf[id] = sl
		}
		used[sl] = true
		b.set(sl, it)
		b.setPlaced(sl.children, it.Children)
	}
	for _, sl := range parent.children {
		if !used[sl] {
			b.set(sl, Item{Hidden: true})
			b.setChildren(sl.children, nil)
		}
	}
}

// setPlaced shows an approval's items in the slots of its submenu, each
// in its place (approvalShape), and hides the slots left.
func (b *binding) setPlaced(slots []*slot, items []Item) {
	shown := make([]*Item, len(slots))
	at, _ := place(approvalShape(), items)
	for i, j := range at {
		if j >= 0 {
			shown[j] = &items[i]
		}
	}
	for j, sl := range slots {
		if shown[j] == nil {
			b.set(sl, Item{Hidden: true})
			b.setChildren(sl.children, nil)
			continue
		}
		b.set(sl, *shown[j])
		b.setChildren(sl.children, shown[j].Children)
	}
}

// setChildren shows items in slots, in order, and hides the slots left.
func (b *binding) setChildren(slots []*slot, items []Item) {
	for i, sl := range slots {
		if i < len(items) {
			b.set(sl, items[i])
			b.setChildren(sl.children, items[i].Children)
		} else {
			b.set(sl, Item{Hidden: true})
			b.setChildren(sl.children, nil)
		}
	}
}

// set shows it in sl, touching only what changed: each change is a
// signal on the bus.
func (b *binding) set(sl *slot, it Item) {
	b.mu.Lock()
	sl.action = it.Action
	b.mu.Unlock()
	if it.Hidden {
		if !sl.hidden {
			sl.mi.Hide()
			sl.hidden = true
		}
		return
	}
	if label := menuText(it.Label); label != sl.label {
		sl.mi.SetTitle(label)
		sl.label = label
	}
	if it.Tooltip != sl.tooltip {
		sl.mi.SetTooltip(it.Tooltip)
		sl.tooltip = it.Tooltip
	}
	if it.Disabled != sl.disabled {
		if it.Disabled {
			sl.mi.Disable()
		} else {
			sl.mi.Enable()
		}
		sl.disabled = it.Disabled
	}
	if sl.hidden {
		sl.mi.Show()
		sl.hidden = false
	}
}

// menuText is label as the platform's menu shows it: on the freedesktop
// menu (com.canonical.dbusmenu) an underscore marks an access key, so a
// literal one is doubled.
func menuText(label string) string {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return label
	}
	return strings.ReplaceAll(label, "_", "__")
}
