package cache

import (
	"errors"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/fanout"
)

// Batched reads (multiRead, ZooKeeper 3.6 and later), for the cache on a
// recursive watch.
//
// ZooKeeper does not bound a reply: a multiRead answer larger than the
// Session accepts (16 MiB) ends the connection, and the Session sends the
// read again, and again. So a batch must fit by construction. A node's
// data is as large as the server allows (jute.maxbuffer, 1 MiB by
// default, which also bounds every write of a Session) and its size is
// known only once read: a batch of data reads counts each node at that
// bound, or at the largest node the cache has seen if that is larger, which
// makes at most 15 reads per batch. A listing is read only once the node's
// stat has said how many children it has; a batch of listings counts each
// child at the longest name the cache has seen (at least nameGuess
// bytes) and fills half the limit, the other half left for names longer
// than expected.
const (
	replyLimit   = 16<<20 - 1<<10 // the Session's 16 MiB, less the reply's own headers
	nodeLimit    = 1 << 20        // the largest data a server with the default jute.maxbuffer holds
	getOverhead  = 96             // a data read's stat and headers in a multiRead reply
	nameGuess    = 128            // bytes of a child's name, until longer ones were seen
	requestLimit = 256 << 10      // bytes of paths in one request, far below jute.maxbuffer
	maxOps       = 500            // reads in one request
	inflight     = 8              // requests in flight at once, pipelined on the connection
)

// span is a batch: the reads paths[from:to].
type span struct{ from, to int }

// readBatched reads the data of the nodes at paths, or with kids their
// children, in batches of one request each, a few in flight at once, and
// returns the results in the order of paths. A failed read is reported in
// its result; the error is the Session's end, or Close.
func (c *Cache) readBatched(paths []string, kids bool) ([]zkcoord.ReadResult, error) {
	res := make([]zkcoord.ReadResult, len(paths))
	batches := c.pack(paths, kids)
	errs := make([]error, len(batches))
	fanout.Each(len(batches), inflight, func(i int) {
		b := batches[i]
		errs[i] = c.readBatch(paths[b.from:b.to], kids, res[b.from:b.to])
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// pack cuts paths into batches whose replies fit what the Session accepts.
func (c *Cache) pack(paths []string, kids bool) []span {
	var out []span
	budget := replyLimit
	if kids {
		budget = replyLimit / 2
	}
	from, reply, req := 0, 0, 0
	for i, p := range paths {
		r, q := c.replyBound(p, kids), len(p)+16
		if i > from && (i-from == maxOps || reply+r > budget || req+q > requestLimit) {
			out = append(out, span{from, i})
			from, reply, req = i, 0, 0
		}
		reply += r
		req += q
	}
	if from < len(paths) {
		out = append(out, span{from, len(paths)})
	}
	return out
}

// replyBound is what the cache counts for the reply to one read.
func (c *Cache) replyBound(path string, kids bool) int {
	if !kids {
		return max(nodeLimit, c.largest) + getOverhead
	}
	n := 0
	if e := c.nodes[path]; e != nil {
		n = int(e.node.Stat.NumChildren)
	}
	return 16 + n*(4+max(nameGuess, c.longestName))
}

// readBatch reads one batch into out: in one multiRead, or, on a server
// that does not know it, one request per read.
func (c *Cache) readBatch(paths []string, kids bool, out []zkcoord.ReadResult) error {
	ops := make([]zkcoord.ReadOp, len(paths))
	for i, p := range paths {
		if readHook != nil {
			readHook(p)
		}
		if kids {
			ops[i] = zkcoord.ChildrenOp(p)
		} else {
			ops[i] = zkcoord.GetOp(p)
		}
	}
	if !c.singleReads.Load() {
		res, err := c.sess.MultiRead(c.ctx, ops...)
		switch {
		case err == nil:
			copy(out, res)
			return nil
		case c.fatal(err):
			return err
		case !errors.Is(err, zkcoord.ErrUnimplemented):
			for i := range out {
				out[i].Err = err
			}
			return nil
		}
		c.singleReads.Store(true)
	}
	for i, p := range paths {
		r := &out[i]
		if kids {
			r.Children, _, r.Err = c.sess.Children(c.ctx, p)
		} else {
			r.Data, r.Stat, r.Err = c.sess.Get(c.ctx, p)
		}
		if r.Err != nil && c.fatal(r.Err) {
			return r.Err
		}
	}
	return nil
}
