package discovery

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
)

// Option configures a Discovery (for all its providers), one Provider or
// a registration kept with RegisterConfig. Every constructor of the
// package takes them; the provider's options mean nothing to a
// registration, and WithRecoveryEvents only to RegisterConfig.
type Option func(*options)

type options struct {
	prov   *Provider // the provider being made (a throwaway one for a registration)
	events chan<- zkcoord.RecoveryEvent
}

// WithRecoveryEvents sends every zkcoord.RecoveryEvent of a
// registration kept with RegisterConfig (session started, session ended
// with its cause, recovering, recovered) to ch; its owner is the
// registration, until it has ended.
// Delivery follows “Event channels” in the [zkcoord] package documentation:
// in order, none dropped while the owner lives, the channel never closed.
// NewProvider rejects it: a provider lives on one Session.
func WithRecoveryEvents(ch chan<- zkcoord.RecoveryEvent) Option {
	return func(o *options) { o.events = ch }
}

// WithStrategy sets how a provider picks an instance: newStrategy is
// called once for each provider, since a Strategy serves one provider
// (for example WithStrategy(Random)). The default is RoundRobin.
func WithStrategy(newStrategy func() Strategy) Option {
	return func(o *options) { o.prov.strategy = newStrategy() }
}

// WithFilter hands out only the instances for which every filter returns
// true (Curator's InstanceFilter); filters add up. They run under the
// provider's lock, on every Get and Instances: keep them quick.
func WithFilter(filters ...func(Instance) bool) Option {
	return func(o *options) { o.prov.filters = append(o.prov.filters, filters...) }
}

// WithDownPolicy sets when NoteError takes an instance out:
// errorThreshold errors within timeout of one another take it out for
// timeout (Curator's DownInstancePolicy). The default is Curator's: 2
// errors, 30 seconds.
func WithDownPolicy(timeout time.Duration, errorThreshold int) Option {
	return func(o *options) { o.prov.down.timeout, o.prov.down.threshold = timeout, max(errorThreshold, 1) }
}

// WithClock sets the clock of down times; the default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.prov.now = now }
}

// Provider hands out instances of one service from a Cache of its
// instances, following registrations as they come and go. Instances marked
// down, disabled ones and those a filter rejects are not handed out. It is
// safe for concurrent use.
type Provider struct {
	cache    *Cache
	strategy Strategy
	filters  []func(Instance) bool
	now      func() time.Time

	mu   sync.Mutex
	down downs
}

// NewProvider starts a provider for the named service and waits, bounded by
// ctx, until its cache has loaded. Close it when done.
func (d *Discovery) NewProvider(ctx context.Context, name string, opts ...Option) (*Provider, error) {
	p := newProvider()
	o := options{prov: p}
	for _, opt := range append(slices.Clone(d.opts), opts...) {
		opt(&o)
	}
	if o.events != nil {
		return nil, fmt.Errorf("%w: recovery events need RegisterConfig (a provider lives on one Session)", ErrInvalid)
	}
	c, err := d.newCache(ctx, name, false)
	if err != nil {
		return nil, err
	}
	p.cache = c
	return p, nil
}

func newProvider() *Provider {
	return &Provider{strategy: RoundRobin(), now: time.Now, down: newDowns()}
}

// Instances returns the instances the provider may hand out, sorted by id:
// registered, enabled, not down and passing the filters. Once the provider
// has stopped (Close, or the end of its Session) it fails with ErrStopped,
// wrapping the Session's cause: what it last saw may be stale.
func (p *Provider) Instances() ([]Instance, error) {
	all, err := p.cache.Instances()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.available(all), nil
}

// available filters all, which is sorted by id; p.mu is held.
func (p *Provider) available(all []Instance) []Instance {
	now := p.now()
	out := all[:0]
	for _, in := range all {
		if in.Disabled || p.down.isDown(in.ID, now) || !p.accepts(in) {
			continue
		}
		out = append(out, in)
	}
	return out
}

func (p *Provider) accepts(in Instance) bool {
	for _, f := range p.filters {
		if !f(in) {
			return false
		}
	}
	return true
}

// Get picks an instance with the provider's strategy. It returns
// ErrNoInstance if none is available, and like Instances fails with
// ErrStopped once the provider has stopped.
func (p *Provider) Get() (Instance, error) {
	all, err := p.cache.Instances()
	if err != nil {
		return Instance{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.available(all)
	if len(in) == 0 {
		return Instance{}, ErrNoInstance
	}
	return p.strategy.Pick(in), nil
}

// NoteError records that a call to the instance failed (Curator's
// ServiceProvider.noteError): once its errors reach the down policy's
// threshold within its timeout, the provider stops handing it out for the
// timeout (see WithDownPolicy).
func (p *Provider) NoteError(in Instance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down.noteError(in.ID, p.now())
}

// MarkDown stops handing out the instance with this id for d, at once.
// Marking it again sets the time anew.
func (p *Provider) MarkDown(id string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down.markDown(id, p.now().Add(d))
}

// Done is closed when the provider stops following the service: after
// Close, or when the Session ended.
func (p *Provider) Done() <-chan struct{} { return p.cache.Done() }

// Close stops the provider and waits, bounded by ctx, until it has.
func (p *Provider) Close(ctx context.Context) error { return p.cache.Close(ctx) }
