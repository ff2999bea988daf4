package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/discovery"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/tool/event"
)

// Events of the discovery workload. Every client registers one instance
// of one service, its id the client's name, and replaces it in bursts:
// it unregisters it and registers it at once again (a delete and a create
// of one node, as Register does over another Session's node), or deletes
// and creates the node in one transaction. Each registration is an
// incarnation of its own, named by the payload (the event's Resource):
//
//	Note "reg"            about to register the incarnation
//	Note "registered"     Register returned: the node exists
//	Note "reg failed"     Register failed: the node may exist
//	Note "unreg"          about to unregister it
//	Note "unregistered"   Unregister returned: the node is gone
//	Note "state S"        the client's Session moved to state S
//	Note "serve ..."      the client's Provider serves these incarnations
//
// A serve report reads "serve <since> <incarnation>...", since being when
// the client's Session last became Connected or Reconnected (event.Now):
// the provider has had the chance to resync from then on. Clients report
// only while connected, every reportEvery.
const (
	noteReg          = "reg"
	noteRegistered   = "registered"
	noteRegFailed    = "reg failed"
	noteUnreg        = "unreg"
	noteUnregistered = "unregistered"
	noteState        = "state "
	noteServe        = "serve "
)

// The registrars' pace: every burstEvery, within burstSpread of each
// other, every client replaces its instance one to maxReplacements times,
// shortDwell apart; then the service stays unchanged for longer than the
// checker's allowance (a session timeout, 4 s by default), so that an
// instance a provider lost while it stays registered is seen missing
// rather than found again at the next change.
var (
	burstEvery      = 10 * time.Second
	burstSpread     = time.Second
	maxReplacements = 3
	shortDwell      = [2]time.Duration{20 * time.Millisecond, 200 * time.Millisecond}
	reportEvery     = 250 * time.Millisecond
)

// discoveryService is the one service of the run.
const discoveryService = "svc"

// servicesPath is the discovery base of the run.
func servicesPath(root string) string { return zkcoord.Join(root, "services") }

// discoveryApp is a client of the discovery workload: a registrar and a
// provider on one Session, on a new Session after each loss.
type discoveryApp struct {
	f  clientFlags
	em *event.Emitter
	looper
	n int // incarnations made
}

func startDiscovery(ctx context.Context, f clientFlags, cfg zkcoord.Config, em *event.Emitter) (*discoveryApp, error) {
	a := &discoveryApp{f: f, em: em}
	loop := func(ctx context.Context) {
		rng := rand.New(rand.NewPCG(seedFor(f.seed, f.name, "discovery"), uint64(time.Now().UnixNano())))
		for ctx.Err() == nil {
			sess, err := a.sm.get(ctx)
			if err != nil {
				return
			}
			a.run(ctx, sess, rng)
		}
	}
	if err := a.start(ctx, cfg, em, f.log, loop); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *discoveryApp) note(detail, inc string) {
	a.em.Emit(event.Event{Kind: event.Note, Resource: inc, Detail: detail})
}

// run registers and serves on sess until it ends or ctx does.
func (a *discoveryApp) run(ctx context.Context, sess *zkcoord.Session, rng *rand.Rand) {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var since atomic.Int64 // when the Session last became connected; 0 while it is not
	states := make(chan struct{})
	go func() {
		defer close(states)
		for st := range sess.Watch(sctx) {
			if st.State == zkcoord.Connected || st.State == zkcoord.Reconnected {
				since.Store(event.Now())
			} else {
				since.Store(0)
			}
			a.note(noteState+st.State.String(), "")
		}
	}()
	defer func() { stop(); <-states }()

	d, err := discovery.New(sess, servicesPath(a.f.root))
	if err != nil {
		fatal(a.f.log, "discovery", err)
	}
	p, err := d.NewProvider(sctx, discoveryService)
	if err != nil {
		if sctx.Err() == nil && sess.Err() == nil {
			a.f.log.Warn("provider failed", "err", err)
			delay.Sleep(sctx, 200*time.Millisecond, nil)
		}
		return
	}
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		a.report(sctx, p, &since)
	}()
	defer func() {
		stop()
		<-reported
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p.Close(cctx)
		cancel()
	}()
	a.register(sctx, sess, d, rng)
}

// report sends the provider's instances every reportEvery while the
// Session is connected, until the provider stops or ctx ends.
func (a *discoveryApp) report(ctx context.Context, p *discovery.Provider, since *atomic.Int64) {
	t := time.NewTicker(reportEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.Done():
			return
		case <-t.C:
		}
		s := since.Load()
		in, err := p.Instances()
		at := event.Now()
		if err != nil {
			return // stopped: the Session ended
		}
		if s == 0 || since.Load() != s {
			continue // not connected throughout
		}
		var b strings.Builder
		b.WriteString(noteServe + strconv.FormatInt(s, 10))
		for _, x := range in {
			var inc string
			if json.Unmarshal(x.Payload, &inc) != nil || inc == "" {
				inc = "?" + x.ID
			}
			b.WriteString(" " + inc)
		}
		a.em.Emit(event.Event{At: at, Kind: event.Note, Detail: b.String()})
	}
}

// register keeps the client's instance registered and replaces it in
// bursts, until ctx ends or the Session does; on the way out it
// unregisters. A replacement is an Unregister and a Register, or, one
// time in two, a transaction that deletes the node and creates it again
// with the new incarnation: providers then learn of both at once.
func (a *discoveryApp) register(ctx context.Context, sess *zkcoord.Session, d *discovery.Discovery, rng *rand.Rand) {
	r, inc := a.registerOnce(ctx, d)
	for ctx.Err() == nil && sess.Err() == nil {
		if r == nil {
			delay.Sleep(ctx, 100*time.Millisecond, sess.Done())
			r, inc = a.registerOnce(ctx, d)
			continue
		}
		if !delay.Sleep(ctx, untilBurst(rng), sess.Done()) {
			break
		}
		for i := range 1 + rng.IntN(maxReplacements) {
			if i > 0 && !delay.Sleep(ctx, shortDwell[0]+time.Duration(rng.Int64N(int64(shortDwell[1]-shortDwell[0]))), sess.Done()) {
				break
			}
			if rng.IntN(2) == 0 {
				r, inc = a.replace(ctx, sess, r, inc)
			} else {
				a.unregister(r, inc)
				r, inc = a.registerOnce(ctx, d)
			}
			if r == nil {
				break
			}
		}
	}
	if r != nil && sess.Err() == nil {
		a.unregister(r, inc)
	}
}

// instance is the client's instance, incarnation inc.
func (a *discoveryApp) instance(inc string) discovery.Instance {
	payload, _ := json.Marshal(inc)
	return discovery.Instance{Name: discoveryService, ID: a.f.name, Address: a.f.name, Port: 1, Payload: payload}
}

// nextInc names a new incarnation.
func (a *discoveryApp) nextInc() string {
	a.n++
	return fmt.Sprintf("%s.%d.%d", a.f.name, os.Getpid(), a.n)
}

// replace deletes r's node and creates it again, with a new incarnation,
// in one transaction. It returns nil if the outcome is not known.
func (a *discoveryApp) replace(ctx context.Context, sess *zkcoord.Session, r *discovery.Registration, old string) (*discovery.Registration, string) {
	inc := a.nextInc()
	in := a.instance(inc)
	in.RegistrationTimeUTC = time.Now().UnixMilli()
	data, err := json.Marshal(in)
	if err != nil {
		fatal(a.f.log, "instance", err)
	}
	a.note(noteUnreg, old)
	a.note(noteReg, inc)
	if _, err := sess.Multi(ctx, zkcoord.DeleteOp(r.Path(), -1), zkcoord.CreateOp(r.Path(), data, zkcoord.FlagEphemeral)); err != nil {
		a.f.log.Warn("replace failed", "err", err)
		a.note(noteRegFailed, inc)
		return nil, ""
	}
	a.note(noteUnregistered, old)
	a.note(noteRegistered, inc)
	return r, inc
}

// untilBurst returns the time until the client's next burst of
// replacements: at a random offset into the next burstEvery period of the
// clock all processes share, so that every client replaces its instance at
// about the same time and then leaves the service alone for longer than
// the checker's allowance.
func untilBurst(rng *rand.Rand) time.Duration {
	now := event.Now()
	next := (now/int64(burstEvery)+1)*int64(burstEvery) + rng.Int64N(int64(burstSpread))
	return time.Duration(next - now)
}

// registerOnce registers a new incarnation; nil if Register failed.
func (a *discoveryApp) registerOnce(ctx context.Context, d *discovery.Discovery) (*discovery.Registration, string) {
	inc := a.nextInc()
	a.note(noteReg, inc)
	r, err := d.Register(ctx, a.instance(inc))
	if err != nil {
		a.note(noteRegFailed, inc)
		return nil, ""
	}
	a.note(noteRegistered, inc)
	return r, inc
}

// unregister removes incarnation inc, r's.
func (a *discoveryApp) unregister(r *discovery.Registration, inc string) {
	a.note(noteUnreg, inc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Unregister(ctx); err != nil {
		a.f.log.Warn("unregister failed", "err", err)
		return
	}
	a.note(noteUnregistered, inc)
}
