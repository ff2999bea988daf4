package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/tool/event"
)

// sessions keeps one live Session for a client, opening a new one after
// each loss. It is safe for concurrent use.
type sessions struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	cur     *zkcoord.Session
	changed chan struct{} // closed and replaced when cur changes
}

func startSessions(cfg zkcoord.Config, em *event.Emitter, log *slog.Logger) *sessions {
	ctx, cancel := context.WithCancel(context.Background())
	m := &sessions{cancel: cancel, done: make(chan struct{}), changed: make(chan struct{})}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
			s, err := zkcoord.Connect(cctx, cfg)
			ccancel()
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("connect failed", "err", err)
				}
				delay.Sleep(ctx, 200*time.Millisecond, nil)
				continue
			}
			em.Emit(event.Event{Kind: event.Note, Detail: fmt.Sprintf("session 0x%x", s.ID())})
			m.set(s)
			select {
			case <-s.Done():
				em.Emit(event.Event{Kind: event.Note, Detail: fmt.Sprintf("session 0x%x ended: %v", s.ID(), s.Err())})
			case <-ctx.Done():
			}
			m.set(nil)
			closeCtx, cc := context.WithTimeout(context.Background(), 10*time.Second)
			s.Close(closeCtx)
			cc()
		}
	}()
	return m
}

func (m *sessions) set(s *zkcoord.Session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur = s
	close(m.changed)
	m.changed = make(chan struct{})
}

// get returns a live Session, waiting for one.
func (m *sessions) get(ctx context.Context) (*zkcoord.Session, error) {
	for {
		m.mu.Lock()
		s, changed := m.cur, m.changed
		m.mu.Unlock()
		if s != nil && s.Err() == nil {
			return s, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (m *sessions) close() {
	m.cancel()
	<-m.done
}
