package cache

import "github.com/zkcoord/zkcoord"

// watchKind says which watch fired.
type watchKind int

const (
	dataWatch   watchKind = iota + 1 // on a cached node's data (and deletion)
	kidsWatch                        // on a cached node's children
	existsWatch                      // on the missing root's creation
	treeWatch                        // the recursive watch on the root
	resync                           // not a watch: the Session reconnected
)

// fired is a watch event, or a request to resync, handed to the owner
// goroutine.
type fired struct {
	sess *zkcoord.Session // the Session the watch was set on
	path string
	kind watchKind
	id   uint64
	ev   zkcoord.Event
}

// arm waits for w in a goroutine of its own and hands its event to the
// owner goroutine through the inbox, so that the owner never waits on a
// particular watch. It returns the watch's id. The watch is the current
// Session's.
func (c *Cache) arm(path string, kind watchKind, w <-chan zkcoord.Event) uint64 {
	c.nextWatch++
	id := c.nextWatch
	sess := c.sess
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case ev, ok := <-w:
			if ok {
				c.inbox.Push(fired{sess: sess, path: path, kind: kind, id: id, ev: ev})
			}
		case <-c.ctx.Done():
		}
	}()
	return id
}
