package election

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Leader describes the current leader as anyone can see it, candidate or
// not.
type Leader struct {
	// ID is the leader's participant id (the data of its node) and Node
	// the path of its node.
	ID   string
	Node string
	// Token is the fencing token (creation zxid) of the leader's node and
	// Session the ZooKeeper session that owns it.
	Token   int64
	Session int64
	// Acting reports that the leader took office: the leader node names
	// this node. A zkcoord leader writes the leader node in the same
	// transaction that bumps the term, before its Leadership is handed out;
	// Acting does not say that the application's leader work has started
	// (see the package documentation). Curator's LeaderLatch never writes
	// the leader node, so a Curator leader is never Acting.
	Acting bool
	// Term is the term the acting leader took office in (0 if not Acting).
	Term int64
	// Value is what the acting leader advertises (WithValue,
	// Leadership.Proclaim); "" if none, or if not Acting.
	Value string
}

// Leader returns the current leader: the participant with the lowest node.
// With no participant it returns ErrNoLeader.
func (e *Election) Leader(ctx context.Context) (Leader, error) {
	l, err := elect.DetachValue(ctx, func(ctx context.Context) (Leader, error) {
		l, _, _, err := e.lookup(ctx, false, false)
		return l, err
	})
	if err != nil {
		return Leader{}, fmt.Errorf("election: leader of %s: %w", e.path, err)
	}
	if l.Node == "" {
		return Leader{}, ErrNoLeader
	}
	return l, nil
}

// Observe follows the leader: its Watcher delivers the current leader,
// then the newest after every change of leader, of its Acting flag or of
// the value it advertises (a reader that falls behind skips intermediate
// ones); the zero Leader means there is none. It needs no candidate. The
// channel is closed when ctx ends, on Stop, when the Session ends or after
// a read fails; Err says why. An observer watches the election's children
// and the leader node, so every join and leave wakes it: one read per
// change per observer, not a herd of candidates.
func (e *Election) Observe(ctx context.Context) *zkcoord.Watcher[Leader] {
	var (
		childW, ackW <-chan zkcoord.Event
		last         Leader
		sent         bool
	)
	return zkcoord.NewWatcher(ctx, e.sess, func(ctx context.Context) (Leader, bool, <-chan zkcoord.Event, error) {
		l, cw, aw, err := e.lookup(bg, childW == nil, ackW == nil)
		if err != nil {
			return Leader{}, false, nil, fmt.Errorf("election: observe %s: %w", e.path, err)
		}
		if cw != nil {
			childW = cw
		}
		if aw != nil {
			ackW = aw
		}
		changed := !sent || l != last
		last, sent = l, true
		// One watch to wait for: whichever of the two fires first; the
		// other stays armed for the next read.
		fire := make(chan zkcoord.Event, 1)
		go func() {
			select {
			case ev := <-childW:
				childW = nil
				fire <- ev
			case ev := <-ackW:
				ackW = nil
				fire <- ev
			case <-ctx.Done():
			}
		}()
		return l, changed, fire, nil
	})
}

// lookup reads the leader (its calls must not be cut short by ctx: see bg), arming a watch on the children (or on the
// election node's creation) and on the leader node when asked.
func (e *Election) lookup(ctx context.Context, watchChildren, watchAck bool) (l Leader, childW, ackW <-chan zkcoord.Event, err error) {
	s := e.sess
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			// Only a node vanishing between two reads brings us here.
			select {
			case <-time.After(time.Duration(min(attempt, 10)) * time.Millisecond):
			case <-ctx.Done():
				return Leader{}, nil, nil, ctx.Err()
			}
		}
		var children []string
		if watchChildren && childW == nil {
			children, _, childW, err = recipe.WatchChildren(ctx, s, e.path)
		} else {
			children, _, err = s.Children(ctx, e.path)
			if errors.Is(err, zkcoord.ErrNoNode) {
				err = nil
			}
		}
		if err != nil {
			return Leader{}, nil, nil, err
		}
		l = Leader{}
		var stat *zkcoord.Stat
		if sorted, _ := participants(children); len(sorted) > 0 {
			node := zkcoord.Join(e.path, sorted[0])
			data, st, err := s.Get(ctx, node)
			if errors.Is(err, zkcoord.ErrNoNode) {
				continue
			}
			if err != nil {
				return Leader{}, nil, nil, err
			}
			l, stat = Leader{ID: string(data), Node: node, Token: st.Czxid, Session: st.EphemeralOwner}, st
		}
		var ack []byte
		if watchAck && ackW == nil {
			ack, _, ackW, err = s.GetW(ctx, e.opts.ackPath)
			if errors.Is(err, zkcoord.ErrNoNode) {
				var ok bool
				ok, _, ackW, err = s.ExistsW(ctx, e.opts.ackPath)
				if err == nil && ok {
					ackW = nil
					continue
				}
			}
		} else {
			ack, _, err = s.Get(ctx, e.opts.ackPath)
			if errors.Is(err, zkcoord.ErrNoNode) {
				err = nil
			}
		}
		if err != nil {
			return Leader{}, nil, nil, err
		}
		if stat != nil && len(ack) > 0 {
			if r, err := decodeAck(ack); err == nil && r.Node == l.Node && r.Token == stat.Czxid {
				l.Acting, l.Term, l.Value = true, r.Term, r.Value
			}
		}
		return l, childW, ackW, nil
	}
}
