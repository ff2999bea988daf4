package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord"
)

// Contender is one client holding or waiting for a lock, as the lock's
// directory shows it: the recipe's promise that lock contention is easy to
// see and debug.
type Contender struct {
	// Name is the contender's node name; Path its full path.
	Name, Path string
	// Holds is true for a holder, false for a waiter.
	Holds bool
	// Writer is true for a Mutex contender and for an RWMutex's write side.
	Writer bool
	// Token is the node's czxid: the holder's fencing token.
	Token int64
	// Session is the id of the ZooKeeper session that owns the node.
	Session int64
	// Since is when the node was created (the server's clock).
	Since time.Time
	// Data is what the contender wrote in its node (Curator writes the
	// client's IP address; zkcoord writes lock.WithData's bytes).
	Data []byte
}

// Contenders lists the Mutex's holder and waiters, in lock order, Kazoo's
// and Curator's included.
func (m *Mutex) Contenders(ctx context.Context) ([]Contender, error) {
	return m.c.contenders(ctx)
}

// Contenders lists the RWMutex's holders (one writer, or every reader
// ahead of the first writer) and waiters, in lock order.
func (rw *RWMutex) Contenders(ctx context.Context) ([]Contender, error) {
	return rw.write.contenders(ctx)
}

// Holders lists the Semaphore's lease nodes in order, and the acquirers
// waiting in turn for the acquirers' mutex. The first lease nodes, as many
// as the limit (see Limit), hold a lease (Holds); a node after them
// belongs to the acquirer that holds the mutex and waits for a lease to be
// freed. An AcquireN that waits holds none of its nodes, though some may
// be among the first. In Kazoo's layout every lease node holds: a waiting
// acquirer has none.
func (s *Semaphore) Holders(ctx context.Context) (holders, waiting []Contender, err error) {
	limit, _, err := s.limit(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	leases, err := s.leases.contenders(ctx)
	if err != nil {
		return nil, nil, err
	}
	for i := range leases {
		leases[i].Holds = s.kazoo || i < limit
	}
	waiting, err = s.locks.contenders(ctx)
	return leases, waiting, err
}

// contenders reads the lock directory and every contender's node.
func (c contention) contenders(ctx context.Context) ([]Contender, error) {
	children, _, err := c.sess.Children(ctx, c.dir)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock: list %s: %w", c.dir, err)
	}
	sorted := sortContenders(children, c.recognise)
	out := make([]Contender, 0, len(sorted))
	for _, ct := range sorted {
		p := zkcoord.Join(c.dir, ct.Name)
		data, st, err := c.sess.Get(ctx, p)
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue // gone meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("lock: read %s: %w", p, err)
		}
		wait, _ := blocker(sorted, ct.Name)
		out = append(out, Contender{
			Name: ct.Name, Path: p, Holds: wait == "", Writer: ct.writer,
			Token: st.Czxid, Session: st.EphemeralOwner, Since: time.UnixMilli(st.Ctime), Data: data,
		})
	}
	return out, nil
}

// Break deletes the node of the Mutex's holder, whoever it is (a Curator
// or Kazoo client too), and returns the holder it broke. The holder's
// Lease then closes Done (ErrNodeDeleted) and its guarded writes fail; a
// holder that does not watch its lease may still run on, which is what
// fencing tokens are for. It fails with ErrNotHeld if nobody holds the
// lock. Use it to clear a lock whose holder is stuck, never as a way to
// take the lock.
func (m *Mutex) Break(ctx context.Context) (Contender, error) {
	h, err := m.holder(ctx, "break")
	if err != nil {
		return Contender{}, err
	}
	// Sequential names are never reused, so the path names exactly the
	// holder read above.
	if err := m.c.sess.Delete(ctx, h.Path, -1); err != nil {
		return Contender{}, fmt.Errorf("lock: break %s: %w", h.Path, err)
	}
	return h, nil
}

// holder returns the contender that holds the Mutex now, or an error for
// what (break, revoke) wrapping ErrNotHeld if nobody holds it.
func (m *Mutex) holder(ctx context.Context, what string) (Contender, error) {
	cs, err := m.Contenders(ctx)
	if err != nil {
		return Contender{}, err
	}
	if len(cs) == 0 || !cs[0].Holds {
		return Contender{}, fmt.Errorf("lock: %s %s: %w", what, m.path, ErrNotHeld)
	}
	return cs[0], nil
}
