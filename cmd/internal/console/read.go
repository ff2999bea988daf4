package console

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zkcoord/zkcoord"
)

// read reads the view of a recipe from the store.
func (m *model) read(r *recipe) (*View, error) {
	switch r.kind {
	case KindGroup:
		g, err := m.readGroup(r.path)
		return &View{Group: g}, err
	case KindElection:
		e, err := m.readElection(r.path)
		return &View{Election: e}, err
	case KindMutex:
		l, err := m.readMutex(r.path)
		return &View{Lock: l}, err
	case KindRWLock:
		l, err := m.readRWLock(r.path)
		return &View{Lock: l}, err
	case KindSemaphore:
		l, err := m.readSemaphore(r.path)
		return &View{Lock: l}, err
	case KindQueue:
		q, err := m.readQueue(r.path)
		return &View{Queue: q}, err
	case KindBarrier:
		ok, err := m.store.has(r.path)
		return &View{Barrier: &BarrierView{Set: ok}}, err
	case KindDoubleBarrier:
		b, err := m.readDoubleBarrier(r.path)
		return &View{Barrier: b}, err
	case KindCounter:
		c, err := m.readCounter(r.path)
		return &View{Counter: c}, err
	case KindService:
		s, err := m.readService(r.path)
		return &View{Service: s}, err
	case KindMembership:
		g, err := m.readMembership(r.path)
		return &View{Membership: g}, err
	}
	return nil, fmt.Errorf("console: unknown kind %q", r.kind)
}

// eachNode calls f with the data and Stat of each of the nodes names
// under dir, in the order given, leaving out those gone meanwhile.
func (m *model) eachNode(dir string, names []string, f func(name string, data []byte, st *zkcoord.Stat)) error {
	for _, n := range names {
		data, st, err := m.store.get(zkcoord.Join(dir, n))
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		f(n, data, st)
	}
	return nil
}

// contenders reads the nodes names under dir, in the order given; nodes
// gone meanwhile are left out.
func (m *model) contenders(dir string, names []string) ([]Contender, error) {
	out := make([]Contender, 0, len(names))
	err := m.eachNode(dir, names, func(n string, data []byte, st *zkcoord.Stat) {
		out = append(out, Contender{Node: n, ID: printable(data), Session: session(st), Token: st.Czxid,
			Since: time.UnixMilli(st.Ctime).UTC(), Write: strings.Contains(n, writeMarker)})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// contendersOf reads the contenders under dir, ordered by the sequence
// number after the last of markers in their names.
func (m *model) contendersOf(dir string, markers ...string) ([]Contender, error) {
	kids, err := m.store.children(dir)
	if err != nil {
		return nil, err
	}
	return m.contenders(dir, ordered(kids, markers...))
}

func (m *model) readElection(p string) (*ElectionView, error) {
	parts, err := m.contendersOf(p, latchMarker)
	if err != nil {
		return nil, err
	}
	e := &ElectionView{Participants: parts}
	if len(parts) > 0 {
		e.Leader = &parts[0]
	}
	if ok, err := m.store.has(p + "-term"); err != nil {
		return nil, err
	} else if ok {
		if _, st, err := m.store.get(p + "-term"); err == nil {
			e.Term = int64(st.Version)
		} else if !errors.Is(err, zkcoord.ErrNoNode) {
			return nil, err
		}
	}
	if ok, err := m.store.has(p + "-leader"); err != nil {
		return nil, err
	} else if ok && e.Leader != nil {
		data, _, err := m.store.get(p + "-leader")
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return nil, err
		}
		var ack struct {
			Node  string `json:"node"`
			Token int64  `json:"token"`
			Term  int64  `json:"term"`
		}
		if err == nil && json.Unmarshal(data, &ack) == nil {
			e.Acting = zkcoord.Base(ack.Node) == e.Leader.Node && ack.Token == e.Leader.Token
			if e.Acting && ack.Term > 0 {
				e.Term = ack.Term
			}
		}
	}
	return e, nil
}

func (m *model) readMutex(p string) (*LockView, error) {
	cs, err := m.contendersOf(p, lockMarker)
	if err != nil {
		return nil, err
	}
	l := &LockView{Holders: []Contender{}, Waiters: []Contender{}}
	if len(cs) > 0 {
		l.Holders, l.Waiters = cs[:1], cs[1:]
	}
	return l, nil
}

// readRWLock: a writer holds the lock when it is first; readers hold it
// while no writer is before them.
func (m *model) readRWLock(p string) (*LockView, error) {
	cs, err := m.contendersOf(p, readMarker, writeMarker)
	if err != nil {
		return nil, err
	}
	l := &LockView{Holders: []Contender{}, Waiters: []Contender{}}
	for i, c := range cs {
		switch {
		case c.Write && i == 0:
			l.Holders = append(l.Holders, c)
		case !c.Write && len(l.Waiters) == 0 && (len(l.Holders) == 0 || !l.Holders[0].Write):
			l.Holders = append(l.Holders, c)
		default:
			l.Waiters = append(l.Waiters, c)
		}
	}
	return l, nil
}

// readSemaphore: leases/ holds the leases, locks/ those waiting for one.
func (m *model) readSemaphore(p string) (*LockView, error) {
	if _, err := m.store.children(p); err != nil {
		return nil, err
	}
	leases, err := m.store.childrenOpt(zkcoord.Join(p, "leases"))
	if err != nil {
		return nil, err
	}
	locks, err := m.store.childrenOpt(zkcoord.Join(p, "locks"))
	if err != nil {
		return nil, err
	}
	holders, err := m.contenders(zkcoord.Join(p, "leases"), ordered(leases, leaseMarker))
	if err != nil {
		return nil, err
	}
	waiters, err := m.contenders(zkcoord.Join(p, "locks"), ordered(locks, lockMarker))
	if err != nil {
		return nil, err
	}
	return &LockView{Holders: holders, Waiters: waiters}, nil
}

// readQueue counts the items and reads the creation time of the one
// created first.
func (m *model) readQueue(p string) (*QueueView, error) {
	kids, err := m.store.children(p)
	if err != nil {
		return nil, err
	}
	q := &QueueView{}
	first, firstSeq := "", ""
	for _, k := range kids {
		name := zkcoord.StripProtected(k)
		if !zkcoord.IsProtected(k) || !strings.HasPrefix(name, queueMarker) {
			continue
		}
		q.Depth++
		seq := name[max(0, len(name)-10):]
		if first == "" || seq < firstSeq {
			first, firstSeq = k, seq
		}
	}
	if first != "" {
		if _, st, err := m.store.get(zkcoord.Join(p, first)); err == nil {
			q.Oldest = time.UnixMilli(st.Ctime).UTC()
		} else if !errors.Is(err, zkcoord.ErrNoNode) {
			return nil, err
		}
	}
	return q, nil
}

func (m *model) readDoubleBarrier(p string) (*BarrierView, error) {
	kids, err := m.store.children(p)
	if err != nil {
		return nil, err
	}
	b := &BarrierView{Set: true, Members: []string{}}
	for _, k := range kids {
		if k == "ready" {
			b.Ready = true
		} else if isUUID(k) {
			b.Members = append(b.Members, k)
		}
	}
	sortStrings(b.Members)
	return b, nil
}

func (m *model) readCounter(p string) (*CounterView, error) {
	data, st, err := m.store.get(p)
	if err != nil {
		return nil, err
	}
	c := &CounterView{Version: st.Version}
	if len(data) == 4 {
		c.Value = int32(binary.BigEndian.Uint32(data))
	}
	return c, nil
}

// session formats a node's ephemeral owner as the CLI does.
func session(st *zkcoord.Stat) string {
	if st.EphemeralOwner == 0 {
		return ""
	}
	return fmt.Sprintf("0x%x", st.EphemeralOwner)
}

// printable returns data as text if it is short, printable UTF-8.
func printable(data []byte) string {
	if len(data) == 0 || len(data) > 200 || !utf8.Valid(data) {
		return ""
	}
	for _, r := range string(data) {
		if r < 0x20 {
			return ""
		}
	}
	return string(data)
}
