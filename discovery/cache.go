package discovery

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cache"
	"github.com/zkcoord/zkcoord/internal/fifo"
)

// EventType says what a cache's Event reports.
type EventType int

const (
	// Added: an instance was registered, or found by the initial load.
	Added EventType = iota + 1
	// Updated: a registered instance's data changed.
	Updated
	// Removed: an instance was unregistered, or its node no longer holds
	// an instance that can be served; Event.Instance is its last value.
	Removed
	// Initialized: the initial load is complete; every instance registered
	// then has been reported as Added.
	Initialized
	// StateChanged: the Session changed state (Event.State). After a
	// terminal state, the last event, Event.Err says why.
	StateChanged
)

var eventNames = [...]string{"", "Added", "Updated", "Removed", "Initialized", "StateChanged"}

func (t EventType) String() string {
	if t > 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return "Unknown"
}

// Event is one change of a Cache, in the order the cache saw it.
type Event struct {
	Type     EventType
	Instance Instance      // Added, Updated, Removed
	State    zkcoord.State // StateChanged
	Err      error         // the cause of a terminal state
}

func (e Event) String() string {
	switch e.Type {
	case Added, Updated, Removed:
		return fmt.Sprintf("%s %s/%s", e.Type, e.Instance.Name, e.Instance.ID)
	case StateChanged:
		return fmt.Sprintf("%s %s", e.Type, e.State)
	}
	return e.Type.String()
}

func (e Event) last() bool { return e.Type == StateChanged && e.State.Terminal() }

// Cache follows the instances of one service, as Curator's ServiceCache
// does: it holds them decoded, current through one watch on the service's
// node (a children cache of package cache), and reports every change as
// an Event. A node that does not hold an instance of the service is left
// out and logged, as queries do. It is safe for concurrent use.
type Cache struct {
	name  string
	sess  *zkcoord.Session
	nodes *cache.Cache
	log   func(msg string, args ...any)

	out    *fifo.Queue[Event] // nil: nobody reads events (a provider's cache)
	events chan Event
	fwd    chan struct{} // closed when the forwarder has ended
	cancel context.CancelFunc

	ready   chan struct{} // closed after the initial load
	drained chan struct{} // closed when follow has read the last event

	mu  sync.RWMutex
	all map[string]Instance // by node path
}

// NewCache starts a cache of the named service's instances and waits,
// bounded by ctx, until it has loaded them. Close it when done.
func (d *Discovery) NewCache(ctx context.Context, name string) (*Cache, error) {
	return d.newCache(ctx, name, true)
}

func (d *Discovery) newCache(ctx context.Context, name string, withEvents bool) (*Cache, error) {
	dir, err := d.dir(name)
	if err != nil {
		return nil, err
	}
	nodes, err := cache.NewChildren(d.sess, dir)
	if err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(context.Background())
	c := &Cache{
		name: name, sess: d.sess, nodes: nodes, log: d.sess.Logger().Warn,
		events: make(chan Event), fwd: make(chan struct{}), cancel: cancel,
		ready: make(chan struct{}), drained: make(chan struct{}),
		all: map[string]Instance{},
	}
	if withEvents {
		c.out = fifo.New[Event]()
		go c.out.Forward(fctx, c.events, Event.last, func() { close(c.fwd) })
	} else {
		close(c.events)
		close(c.fwd)
	}
	go c.follow()
	select {
	case <-c.ready:
		return c, nil
	case <-nodes.Done():
		err = nodes.Err()
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.Close(context.Background())
	return nil, fmt.Errorf("discovery: cache of %s: %w", name, err)
}

// follow applies the children cache's events to the decoded instances,
// then queues the events they make; it reads every event, so that none
// piles up, and never waits for the reader of Events.
func (c *Cache) follow() {
	defer close(c.drained)
	for ev := range c.nodes.Events() {
		switch ev.Type {
		case cache.Added, cache.Updated:
			in, err := decode(ev.Node.Path, ev.Node.Data)
			if err != nil {
				c.log("discovery: skipping an instance", "err", err)
			}
			c.mu.Lock()
			old, had := c.all[ev.Node.Path]
			if err != nil {
				delete(c.all, ev.Node.Path)
			} else {
				c.all[ev.Node.Path] = in
			}
			c.mu.Unlock()
			switch {
			case err != nil && had:
				c.emit(Event{Type: Removed, Instance: old})
			case err == nil && had:
				c.emit(Event{Type: Updated, Instance: in})
			case err == nil:
				c.emit(Event{Type: Added, Instance: in})
			}
		case cache.Removed:
			c.mu.Lock()
			old, had := c.all[ev.Node.Path]
			delete(c.all, ev.Node.Path)
			c.mu.Unlock()
			if had {
				c.emit(Event{Type: Removed, Instance: old})
			}
		case cache.Failed:
			c.log("discovery: reading an instance failed", "service", c.name, "err", ev.Err)
		case cache.Initialized:
			close(c.ready)
			c.emit(Event{Type: Initialized})
		case cache.StateChanged:
			c.emit(Event{Type: StateChanged, State: ev.State, Err: ev.Err})
		}
	}
}

func (c *Cache) emit(ev Event) {
	if c.out != nil {
		c.out.Push(ev)
	}
}

// Events returns the cache's events, in order, none dropped: the Added
// events of the initial load, Initialized, then every change and every
// state change of the Session. It is closed after a terminal state of the
// Session, or when Close is called. Events queue without limit while
// nobody reads.
func (c *Cache) Events() <-chan Event { return c.events }

// Instances returns the registered instances of the service, sorted by id,
// disabled ones included. Once the cache has stopped (Close, or the end of
// its Session) it fails with ErrStopped, wrapping the Session's cause:
// what it last saw may be stale.
func (c *Cache) Instances() ([]Instance, error) {
	if err := c.stopped(); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]Instance, 0, len(c.all))
	for _, in := range c.all {
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// stopped returns why the cache no longer follows its service, or nil.
// The Session is asked first: its end precedes the cache's by a moment.
func (c *Cache) stopped() error {
	if err := c.sess.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	select {
	case <-c.nodes.Done():
		if err := c.nodes.Err(); err != nil {
			return fmt.Errorf("%w: %w", ErrStopped, err)
		}
		return ErrStopped
	default:
		return nil
	}
}

// Done is closed when the cache stops following the service: after
// Close, or when the Session ended.
func (c *Cache) Done() <-chan struct{} { return c.nodes.Done() }

// Close stops the cache and waits, bounded by ctx, until it has; Events
// is then closed.
func (c *Cache) Close(ctx context.Context) error {
	c.cancel()
	if err := c.nodes.Close(ctx); err != nil {
		return err
	}
	for _, ch := range []chan struct{}{c.drained, c.fwd} {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
