package discovery

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cache"
)

// Option configures a Discovery (for all its providers) or one Provider.
type Option func(*Provider)

// WithStrategy sets how a provider picks an instance: newStrategy is
// called once for each provider, since a Strategy serves one provider
// (for example WithStrategy(Random)). The default is RoundRobin.
func WithStrategy(newStrategy func() Strategy) Option {
	return func(p *Provider) { p.strategy = newStrategy() }
}

// Provider hands out instances of one service from a cache of its
// instances (a children cache of the service's node), following
// registrations as they come and go. Instances marked down, and disabled
// ones, are not handed out. It is safe for concurrent use.
type Provider struct {
	name     string
	sess     *zkcoord.Session
	cache    *cache.Cache
	strategy Strategy
	log      func(msg string, args ...any)
	ready    chan struct{}
	drained  chan struct{}

	mu   sync.Mutex
	all  map[string]Instance  // by node path
	down map[string]time.Time // instance id -> until when
	now  func() time.Time
}

// NewProvider starts a provider for the named service and waits, bounded by
// ctx, until its cache has loaded. Close it when done.
func (d *Discovery) NewProvider(ctx context.Context, name string, opts ...Option) (*Provider, error) {
	dir, err := d.dir(name)
	if err != nil {
		return nil, err
	}
	c, err := cache.NewChildren(d.sess, dir)
	if err != nil {
		return nil, err
	}
	p := &Provider{
		name: name, sess: d.sess, cache: c, strategy: RoundRobin(), log: d.sess.Logger().Warn,
		ready: make(chan struct{}), drained: make(chan struct{}),
		all: map[string]Instance{}, down: map[string]time.Time{}, now: time.Now,
	}
	for _, o := range append(slices.Clone(d.opts), opts...) {
		o(p)
	}
	go p.follow()
	select {
	case <-p.ready:
		return p, nil
	case <-c.Done():
		p.Close(context.Background())
		return nil, c.Err()
	case <-ctx.Done():
		p.Close(context.Background())
		return nil, ctx.Err()
	}
}

// follow applies the cache's events to the decoded instances; it reads
// every event, so that none piles up.
func (p *Provider) follow() {
	defer close(p.drained)
	for ev := range p.cache.Events() {
		switch ev.Type {
		case cache.Added, cache.Updated:
			in, err := decode(ev.Node.Path, ev.Node.Data)
			p.mu.Lock()
			if err != nil {
				delete(p.all, ev.Node.Path)
			} else {
				p.all[ev.Node.Path] = in
			}
			p.mu.Unlock()
			if err != nil {
				p.log("discovery: skipping an instance", "err", err)
			}
		case cache.Removed:
			p.mu.Lock()
			delete(p.all, ev.Node.Path)
			p.mu.Unlock()
		case cache.Initialized:
			close(p.ready)
		}
	}
}

// Instances returns the instances the provider may hand out, sorted by id:
// registered, enabled and not marked down. Once the provider has stopped
// (Close, or the end of its Session) it fails with ErrStopped, wrapping
// the Session's cause: what it last saw may be stale.
func (p *Provider) Instances() ([]Instance, error) {
	if err := p.stopped(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.available(), nil
}

// stopped returns why the provider no longer follows its service, or nil.
// The Session is asked first: its end precedes the cache's by a moment.
func (p *Provider) stopped() error {
	if err := p.sess.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	select {
	case <-p.cache.Done():
		if err := p.cache.Err(); err != nil {
			return fmt.Errorf("%w: %w", ErrStopped, err)
		}
		return ErrStopped
	default:
		return nil
	}
}

func (p *Provider) available() []Instance {
	now := p.now()
	out := make([]Instance, 0, len(p.all))
	for _, in := range p.all {
		if until, ok := p.down[in.ID]; ok {
			if now.Before(until) {
				continue
			}
			delete(p.down, in.ID)
		}
		if in.Disabled {
			continue
		}
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Get picks an instance with the provider's strategy. It returns
// ErrNoInstance if none is available, and like Instances fails with
// ErrStopped once the provider has stopped.
func (p *Provider) Get() (Instance, error) {
	if err := p.stopped(); err != nil {
		return Instance{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.available()
	if len(in) == 0 {
		return Instance{}, ErrNoInstance
	}
	return p.strategy.Pick(in), nil
}

// MarkDown stops handing out the instance with this id for d, for example
// after a request to it failed (Curator's noteError with a
// DownInstancePolicy). Marking it again extends the time.
func (p *Provider) MarkDown(id string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down[id] = p.now().Add(d)
}

// Done is closed when the provider stops following the service: after
// Close, or when the Session ended.
func (p *Provider) Done() <-chan struct{} { return p.cache.Done() }

// Close stops the provider and waits, bounded by ctx, until it has.
func (p *Provider) Close(ctx context.Context) error {
	if err := p.cache.Close(ctx); err != nil {
		return err
	}
	select {
	case <-p.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
