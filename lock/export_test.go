package lock

import (
	"context"
	"strings"

	"github.com/zkcoord/zkcoord"
)

// AdoptForTest takes a lock on node, an existing contender node of the
// lock's Session, as if Lock (on a Mutex) or Lock or RLock (on an
// RWMutex, by the node's name) had just created it. Tests use it for a
// node that a sequential create cannot make on demand: one whose sequence
// number is past the counter's wrap.
func AdoptForTest(ctx context.Context, l any, node string) (*Lease, error) {
	var (
		c contention
		s *slot
		k = kindWrite
	)
	switch l := l.(type) {
	case *Mutex:
		c, s = l.c, &l.slot
	case *RWMutex:
		c, s = l.write, &l.slot
		if strings.Contains(zkcoord.Base(node), readName) {
			c, k = l.read, kindRead
		}
	default:
		panic("AdoptForTest: not a Mutex or an RWMutex")
	}
	return s.acquire(k, func() (*Lease, error) {
		children, _, err := c.sess.Children(ctx, c.dir)
		if err != nil {
			return nil, err
		}
		return c.contend(ctx, node, children, false, nil)
	})
}
