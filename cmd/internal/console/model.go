package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
)

// closeTimeout bounds the closing of a model's caches, which removes
// their watches from the server.
const closeTimeout = 10 * time.Second

// walkPrefix marks the owner id of a walk of a path (recipes are owned by
// their own path, which starts with "/").
const walkPrefix = "walk:"

// recipe is one recognised recipe and the last view published for it.
type recipe struct {
	path string
	kind Kind
	// hinted recipes were named in Options.Paths: they stay while their
	// node is missing.
	hinted bool
	view   *View
	raw    []byte
}

// model follows the recipes under the console's roots. Its state belongs
// to the goroutine running run; its caches report to it through the
// store's queue of events.
type model struct {
	sess  *zkcoord.Session
	log   *slog.Logger
	hub   *hub
	roots []string
	hints map[string]Kind
	now   func() time.Time

	ctx   context.Context
	wg    sync.WaitGroup
	store *store
	// recipes by path, and what is dirty: recipe paths and walk ids.
	recipes map[string]*recipe
	dirty   map[string]struct{}
}

// newModel returns a model of what sess shows under roots. It takes over
// recipes, those of a model that followed another Session (nil for none),
// and reads each again: what differs is published as a change.
func newModel(ctx context.Context, sess *zkcoord.Session, log *slog.Logger, h *hub, roots []string, hints map[string]Kind,
	recipes map[string]*recipe) *model {
	if recipes == nil {
		recipes = map[string]*recipe{}
	}
	paths := slices.Clone(roots)
	for p := range hints {
		paths = append(paths, p)
	}
	return &model{sess: sess, log: log, hub: h, roots: roots, hints: hints, now: time.Now,
		ctx: ctx, store: newStore(sess, paths), recipes: recipes, dirty: map[string]struct{}{}}
}

// run owns the model until ctx ends.
func (m *model) run() {
	m.wg.Add(1)
	go m.followState()
	for p, k := range m.hints {
		if _, ok := m.recipes[p]; !ok {
			m.recipes[p] = &recipe{path: p, kind: k, hinted: true}
		}
	}
	for p := range m.recipes {
		m.dirty[p] = struct{}{}
	}
	for _, r := range m.roots {
		m.dirty[walkPrefix+r] = struct{}{}
	}
	for {
		// While a cache loads or resyncs, its copy is part old, part
		// new: the recipes are read once it is whole.
		if !m.store.busy() {
			m.settle()
			if !m.store.busy() {
				m.hub.ready()
			}
		}
		select {
		case <-m.ctx.Done():
			return
		case <-m.sess.Done():
			m.hub.fail(m.sess.Err())
			<-m.ctx.Done()
			return
		case <-m.store.events.Ready():
			for _, ch := range m.store.events.PopAll() {
				m.store.apply(ch, m.dirty)
			}
		}
	}
}

// followState tells the hub whether the Session is in contact with
// ZooKeeper, until the Session or ctx ends.
func (m *model) followState() {
	defer m.wg.Done()
	for ch := range m.sess.Watch(m.ctx) {
		m.hub.connected(ch.State == zkcoord.Connected || ch.State == zkcoord.Reconnected)
	}
}

// settle processes what is dirty until nothing is: walks first (parents
// before children), then recipes.
func (m *model) settle() {
	for len(m.dirty) > 0 && m.ctx.Err() == nil {
		ids := slices.Sorted(maps.Keys(m.dirty))
		clear(m.dirty)
		for _, id := range ids {
			if p, ok := strings.CutPrefix(id, walkPrefix); ok {
				m.walk(p)
			}
		}
		for _, id := range ids {
			if r, ok := m.recipes[id]; ok {
				m.refresh(r)
			}
		}
	}
}

// walk looks for recipes at and under p.
func (m *model) walk(p string) {
	if _, ok := m.recipes[p]; ok || p == "/zookeeper" || m.ctx.Err() != nil {
		return
	}
	m.store.owner = walkPrefix + p
	kids, err := m.store.children(p)
	if err != nil {
		// A root that does not exist is walked once its cache reports it.
		if errors.Is(err, zkcoord.ErrNoNode) {
			m.forgetUnder(p, nil)
		} else if !errors.Is(err, errLoading) {
			m.log.Warn("console: walk", "path", p, "err", err)
		}
		return
	}
	kind := classify(kids)
	if (kind == "" || kind == KindDoubleBarrier) && len(kids) > 0 && m.isService(p, kids) {
		kind = KindService
	}
	if kind == "" && len(kids) == 0 {
		if data, _, err := m.store.get(p); err == nil && len(data) == 4 {
			kind = KindCounter
		}
	}
	if kind != "" {
		// Whatever was taken for a recipe below, while p's layout was
		// incomplete, is part of this one.
		m.forgetUnder(p, []string{})
		r := &recipe{path: p, kind: kind}
		m.recipes[p] = r
		m.refresh(r)
		return
	}
	m.forgetUnder(p, kids)
	for _, k := range kids {
		m.walk(zkcoord.Join(p, k))
	}
}

// forgetUnder forgets the recipes below p that are not under one of the
// children kids (all of them when kids is nil), and p itself if kids is
// nil.
func (m *model) forgetUnder(p string, kids []string) {
	prefix := strings.TrimSuffix(p, "/") + "/"
	for rp, r := range m.recipes {
		if r.hinted {
			continue
		}
		rest, below := strings.CutPrefix(rp, prefix)
		child, _, _ := strings.Cut(rest, "/")
		switch {
		case rp == p && kids == nil: // p itself is gone
		case !below:
			continue
		case kids != nil && slices.Contains(kids, child):
			continue
		}
		m.forget(r)
	}
}

func (m *model) forget(r *recipe) {
	delete(m.recipes, r.path)
	m.hub.remove(r.path)
	m.event(r.path, r.kind, "gone")
}

// refresh reads a recipe again and publishes its view if it changed.
func (m *model) refresh(r *recipe) {
	m.store.owner = r.path
	v, err := m.read(r)
	switch {
	case errors.Is(err, errLoading):
		return // read again once loaded
	case errors.Is(err, zkcoord.ErrNoNode):
		if !r.hinted {
			m.forget(r)
			return
		}
		// A recipe named in Options.Paths stays, waiting for its node.
		if ok, herr := m.store.has(r.path); herr == nil && !ok {
			err = fmt.Errorf("console: %s: no such node (yet)", r.path)
		}
	}
	if err != nil {
		if m.ctx.Err() != nil || m.sess.Err() != nil {
			return // the last view stands until the console resumes
		}
		m.log.Warn("console: read", "path", r.path, "kind", r.kind, "err", err)
		v = &View{Error: err.Error()}
	}
	v.Path, v.Kind = r.path, r.kind
	raw, err := json.Marshal(v)
	if err != nil {
		m.log.Error("console: encode", "path", r.path, "err", err)
		return
	}
	if bytes.Equal(raw, r.raw) {
		return
	}
	for _, text := range changes(r.view, v) {
		m.event(r.path, r.kind, text)
	}
	r.view, r.raw = v, raw
	m.hub.set(r.path, raw)
}

func (m *model) event(p string, k Kind, text string) {
	m.hub.event(Event{Time: m.now(), Path: p, Kind: k, Text: text})
}

// close closes the caches and waits for the model's goroutines; ctx must
// have ended.
func (m *model) close() {
	m.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	m.store.close(ctx)
}
