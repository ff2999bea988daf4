package discovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/end"
)

// SupervisedRegistration is an instance kept registered across Sessions:
// RegisterConfig runs it under zkcoord.Supervise, and every new Session
// registers it again with the data of the latest Update. It is safe for
// concurrent use.
type SupervisedRegistration struct {
	base     string
	log      *slog.Logger
	stop     context.CancelFunc
	ended    *end.End // when supervision has ended, and why
	unregErr error    // serve's: what unregistering gave; written before ended ends

	mu         sync.Mutex
	in         Instance
	version    uint64           // of in; Update bumps it
	written    uint64           // the version the node holds; 0: not registered
	path       string           // the node, "" between Sessions
	sess       *zkcoord.Session // of the registration, nil between Sessions
	registered bool             // once
	changed    chan struct{}    // closed and replaced when written changes
	wake       chan struct{}    // an Update for the owner goroutine
}

// RegisterConfig registers an instance under base through Sessions it
// opens, and closes, from cfg with zkcoord.Supervise: after a Session is
// lost or expires, a new one registers the instance again, with the data
// of the latest Update, and so on until Unregister. It returns once the
// instance is first registered, or fails when that cannot happen before
// ctx ends. WithRecoveryEvents reports every Session lost and every
// recovery; the provider's options mean nothing here.
//
// After the first registration every failure leads to a new Session: a
// write refused with the Session alive (an ACL, say) closes it, and a
// Session follows after a backoff. Only Unregister, or credentials or a
// Config that a new Session cannot fix, end it (see Done).
func RegisterConfig(ctx context.Context, cfg zkcoord.Config, base string, in Instance, opts ...Option) (*SupervisedRegistration, error) {
	if err := zkcoord.ValidatePath(base); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	in = complete(in)
	if err := zkcoord.ValidateName(in.Name); err != nil {
		return nil, fmt.Errorf("%w: service name: %w", ErrInvalid, err)
	}
	if err := zkcoord.ValidateName(in.ID); err != nil {
		return nil, fmt.Errorf("%w: instance id: %w", ErrInvalid, err)
	}
	if _, err := createFlags(in); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sctx, stop := context.WithCancel(context.Background())
	r := &SupervisedRegistration{
		base: base, log: log, stop: stop, ended: end.New(),
		in: in, version: 1, changed: make(chan struct{}), wake: make(chan struct{}, 1),
	}
	restart := func(err error) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.registered {
			r.log.Warn("discovery: registration lost; registering again on a new session", "instance", r.in.String(), "err", err)
		}
		return r.registered || errors.Is(err, zkcoord.ErrSessionLost) || errors.Is(err, zkcoord.ErrSessionExpired)
	}
	o := options{prov: newProvider()}
	for _, opt := range opts {
		opt(&o)
	}
	sopts := []zkcoord.SuperviseOption{zkcoord.WithRestartIf(restart)}
	if o.events != nil {
		sopts = append(sopts, zkcoord.WithRecoveryEvents(o.events))
	}
	go func() {
		err := zkcoord.Supervise(sctx, cfg, r.serve, sopts...)
		if sctx.Err() != nil {
			err = r.unregErr
		}
		r.ended.End(err)
	}()
	if err := r.await(ctx, 1); err != nil {
		r.stop()
		<-r.ended.Done()
		return nil, fmt.Errorf("discovery: register %s: %w", in, err)
	}
	return r, nil
}

// serve registers the instance on sess, writes each Update, and
// unregisters it when stopped. It runs on Supervise's goroutine, the one
// that writes the node.
func (r *SupervisedRegistration) serve(ctx context.Context, sess *zkcoord.Session) error {
	d, err := New(sess, r.base)
	if err != nil {
		return err
	}
	defer r.detach()
	var reg *Registration // of this Session
	for ctx.Err() == nil {
		r.mu.Lock()
		in, v, w := r.in, r.version, r.written
		r.mu.Unlock()
		if v != w {
			if reg, err = write(ctx, d, reg, in); err != nil {
				if ctx.Err() != nil {
					break // stopped, or the Session ended
				}
				return err
			}
			r.setWritten(v, reg.Path(), sess)
		}
		select {
		case <-r.wake:
		case <-ctx.Done():
		}
	}
	if err := sess.Err(); err != nil {
		return err
	}
	// Stopped (Unregister): delete the node, also one whose create may
	// have been cut short. A DynamicSequential one not known goes with the
	// Session, which Supervise closes next.
	if in := r.Instance(); reg == nil && in.ServiceType != DynamicSequential {
		reg = &Registration{d: d, in: in}
		reg.path, _ = d.path(in.Name, in.ID)
	}
	if reg != nil {
		uctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
		defer cancel()
		if err := reg.Unregister(uctx); err != nil {
			r.unregErr = err
		}
	}
	return nil
}

// write registers in on d's Session, or updates reg, registering in again
// if reg's node was deleted meanwhile. It returns the registration, if any.
func write(ctx context.Context, d *Discovery, reg *Registration, in Instance) (*Registration, error) {
	if reg != nil {
		err := reg.Update(ctx, in)
		if !errors.Is(err, ErrNotFound) {
			return reg, err
		}
	}
	next, err := d.Register(ctx, in)
	if err != nil {
		return reg, err
	}
	return next, nil
}

func (r *SupervisedRegistration) setWritten(v uint64, path string, sess *zkcoord.Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil && r.sess != sess {
		r.log.Info("discovery: registered again", "instance", r.in.String(), "path", path)
	}
	r.written, r.path, r.sess, r.registered = v, path, sess, true
	close(r.changed)
	r.changed = make(chan struct{})
}

// detach forgets the node of a Session that ended.
func (r *SupervisedRegistration) detach() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written, r.path = 0, ""
}

// await waits until the node holds version v of the data, or later.
func (r *SupervisedRegistration) await(ctx context.Context, v uint64) error {
	for {
		r.mu.Lock()
		w, changed := r.written, r.changed
		r.mu.Unlock()
		if w >= v {
			return nil
		}
		select {
		case <-changed:
		case <-r.ended.Done():
			if err := r.ended.Err(); err != nil {
				return err
			}
			return ErrStopped
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Instance returns the instance with the data of the latest Update.
func (r *SupervisedRegistration) Instance() Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.in
}

// Path returns the instance's node, or "" while no Session holds it.
func (r *SupervisedRegistration) Path() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.path
}

// Update replaces the instance's data, as Registration.Update does, and
// waits, bounded by ctx, until the node holds it. The data is recorded
// first, and every later registration uses it: when the Session ends
// before the write, the next Session registers it. When ctx ends first
// the write goes on in the background, and Update returns ctx's error.
func (r *SupervisedRegistration) Update(ctx context.Context, in Instance) error {
	r.mu.Lock()
	in, err := updated(r.in, in)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	r.in = in
	r.version++
	v := r.version
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	if err := r.await(ctx, v); err != nil {
		return fmt.Errorf("discovery: update %s: %w", in, err)
	}
	return nil
}

// Done is closed when the registration has ended: after Unregister, or
// when a new Session cannot help (rejected credentials, an invalid
// Config). Err then says why.
func (r *SupervisedRegistration) Done() <-chan struct{} { return r.ended.Done() }

// Err returns, once Done is closed, why the registration ended: nil after
// an Unregister that deleted the node.
func (r *SupervisedRegistration) Err() error { return r.ended.Err() }

// Unregister deletes the instance's node, stops registering it and closes
// the Session, waiting until that is done or ctx ends. Called while no
// Session is open (between a loss and the next Session), it has no node
// to delete: a Static or Permanent instance's node then stays.
func (r *SupervisedRegistration) Unregister(ctx context.Context) error {
	r.stop()
	select {
	case <-r.ended.Done():
		if err := r.ended.Err(); err != nil {
			return fmt.Errorf("discovery: unregister: %w", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
