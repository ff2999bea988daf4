package cache

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/fifo"
)

// ErrInvalid wraps the errors of constructors given a nil Session or an
// invalid path.
var ErrInvalid = errors.New("cache: invalid argument")

// Cache keeps a local copy of a node, of a node's children or of a subtree,
// current through watches. Build it with NewNode, NewChildren or NewTree;
// it is safe for concurrent use. One goroutine owns its state; reads take a
// short lock and never wait for ZooKeeper.
type Cache struct {
	sess       *zkcoord.Session // written by the owner goroutine: with NewTreeConfig, the current Session
	root       string
	maxDepth   int
	hideRoot   bool // a children cache reports the root's children, not the root
	supervised bool // NewTreeConfig: one Session after another

	ctx    context.Context
	cancel context.CancelFunc
	events chan Event
	out    *fifo.Queue[Event]
	inbox  *fifo.Queue[fired]
	done   chan struct{} // closed when the owner goroutine has ended
	wg     sync.WaitGroup

	mu    sync.RWMutex
	nodes map[string]*entry // written only by the owner goroutine

	// Owned by the owner goroutine.
	oneShot     bool   // one-shot watches, not one recursive watch
	nextWatch   uint64 // of one-shot watches
	rootWatch   uint64 // id of the watch on the missing root's creation
	largest     int    // the largest data length read, for batches
	longestName int    // the longest child name listed, for batches

	// The recursive watch, removed by Close; set by the owner goroutine.
	watchMu sync.Mutex
	watch   *zkcoord.PersistentWatch

	singleReads atomic.Bool // the server does not know multiRead

	errMu sync.Mutex
	err   error
}

// entry is one cached node.
type entry struct {
	node  Node
	depth int
	// kids holds the names of the cached children, for nodes above the
	// depth limit; nil at it. A child the cache does not hold (its read
	// found it gone, or failed) is not named.
	kids map[string]struct{}
	// ids of the outstanding watches on the node's data and children; 0
	// when none is set. A watch event whose id is not the current one
	// belongs to an earlier incarnation of the node and is ignored.
	dataWatch, kidsWatch uint64
}

// NewNode caches one node: its data and stat, and whether it exists. It is
// Curator's NodeCache and Kazoo's DataWatch. It takes the package's
// options, and refuses WithMaxDepth (its depth is 0) and
// WithRecoveryEvents (it runs on one Session).
func NewNode(sess *zkcoord.Session, path string, opts ...Option) (*Cache, error) {
	if err := sessionBound(opts, "NewNode"); err != nil {
		return nil, err
	}
	return start(sess, path, 0, false)
}

// sessionBound checks the options of NewNode and NewChildren, whose depth
// is fixed and whose Session is the caller's.
func sessionBound(opts []Option, name string) error {
	o := options{maxDepth: -1}
	for _, f := range opts {
		f(&o)
	}
	if o.maxDepth != -1 {
		return fmt.Errorf("%w: %s takes no depth limit (use NewTree)", ErrInvalid, name)
	}
	if o.events != nil {
		return fmt.Errorf("%w: recovery events need NewTreeConfig (a Session cannot be renewed)", ErrInvalid)
	}
	return nil
}

// NewChildren caches the children of a node, with their data and stats:
// Curator's PathChildrenCache and Kazoo's ChildrenWatch. Events and
// Snapshot concern the children only; Children(path) lists them. The
// parent need not exist; its children are reported once it does. Its
// options are NewNode's.
func NewChildren(sess *zkcoord.Session, path string, opts ...Option) (*Cache, error) {
	if err := sessionBound(opts, "NewChildren"); err != nil {
		return nil, err
	}
	return start(sess, path, 1, true)
}

// NewTree caches a node and its descendants, down to WithMaxDepth levels:
// Curator's TreeCache and CuratorCache, Kazoo's TreeCache. The root need
// not exist; it is reported once it does.
func NewTree(sess *zkcoord.Session, path string, opts ...Option) (*Cache, error) {
	o := treeOptions(opts)
	if o.events != nil {
		return nil, fmt.Errorf("%w: recovery events need NewTreeConfig (a Session cannot be renewed)", ErrInvalid)
	}
	return start(sess, path, o.maxDepth, false)
}

// NewTreeConfig caches a node and its descendants, as NewTree does, on
// Sessions it opens itself from cfg, through zkcoord.Supervise: when a
// Session is Lost or Expired, a new one is opened (with backoff) and the
// cache carries on from its copy on the new Session. Events then reports
// the terminal state of the old Session, the first state of the new one,
// exactly the differences between the copy and the tree the new Session
// reads (what was created, changed or deleted while no Session was open),
// and Resynced. Nothing cached before is kept unless the new Session reads
// it, unchanged, from the server. WithMaxDepth(0) caches a single node.
// It returns once the first Session is open, or fails when ctx ends
// first; ctx does not bound the cache's life. Events is closed after Close
// or when Supervise ends (credentials rejected, an invalid Config), with a
// last StateChanged Closed event holding the cause.
func NewTreeConfig(ctx context.Context, cfg zkcoord.Config, path string, opts ...Option) (*Cache, error) {
	if err := zkcoord.ValidatePath(path); err != nil { // a cache may cache /, as NewTree
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	o := treeOptions(opts)
	c := newCache(nil, path, o.maxDepth, false)
	c.supervised = true
	started := make(chan struct{})
	go func() {
		defer close(c.done)
		c.setErr(c.supervise(cfg, o, started))
	}()
	select {
	case <-started:
		return c, nil
	case <-c.done:
		err := c.Err()
		c.Close(context.Background())
		return nil, fmt.Errorf("cache: %s: %w", path, err)
	case <-ctx.Done():
		c.Close(context.Background())
		return nil, fmt.Errorf("cache: %s: %w", path, ctx.Err())
	}
}

func treeOptions(opts []Option) options {
	o := options{maxDepth: -1}
	for _, f := range opts {
		f(&o)
	}
	if o.maxDepth < 0 {
		o.maxDepth = math.MaxInt
	}
	return o
}

func start(sess *zkcoord.Session, path string, maxDepth int, hideRoot bool) (*Cache, error) {
	// Unlike a recipe's, a cache's root may be "/": the whole tree (in a
	// chroot, the chroot's).
	if err := zkcoord.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if sess == nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, zkcoord.ErrNilSession)
	}
	c := newCache(sess, path, maxDepth, hideRoot)
	go func() {
		defer close(c.done)
		c.setErr(c.runSession(sess, true))
	}()
	return c, nil
}

// newCache returns a cache whose owner goroutine is still to start.
func newCache(sess *zkcoord.Session, path string, maxDepth int, hideRoot bool) *Cache {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cache{
		sess: sess, root: path, maxDepth: maxDepth, hideRoot: hideRoot,
		// A recursive watch on a single node would report its whole
		// subtree for nothing; one one-shot watch costs the same per change.
		oneShot: maxDepth == 0 || brokenDeletion,
		ctx:     ctx, cancel: cancel,
		events: make(chan Event),
		out:    fifo.New[Event](),
		inbox:  fifo.New[fired](),
		done:   make(chan struct{}),
		nodes:  map[string]*entry{},
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.out.Forward(ctx, c.events, c.last, func() {})
	}()
	return c
}

// Events returns the cache's events, in order, none dropped: the Added
// events of the initial load, Initialized, then every change and every
// state change of the Session. It is closed after a terminal state of the
// Session (NewTreeConfig: of the last one), or when Close is called.
// Events queue without limit while nobody reads.
func (c *Cache) Events() <-chan Event { return c.events }

// Get returns the cached node at path, if the cache holds it.
func (c *Cache) Get(path string) (Node, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.nodes[path]
	if !ok || (c.hideRoot && path == c.root) {
		return Node{}, false
	}
	return e.node, true
}

// Children returns the sorted names of the cached children of path: nil if
// the node is not cached or is at the depth limit.
func (c *Cache) Children(path string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.nodes[path]
	if !ok || len(e.kids) == 0 {
		return nil
	}
	names := make([]string, 0, len(e.kids))
	for k := range e.kids {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Snapshot returns a copy of the whole cache, by path, taken at one moment.
func (c *Cache) Snapshot() map[string]Node {
	c.mu.RLock()
	defer c.mu.RUnlock()
	snap := make(map[string]Node, len(c.nodes))
	for p, e := range c.nodes {
		if c.hideRoot && p == c.root {
			continue
		}
		snap[p] = e.node
	}
	return snap
}

// Len returns the number of cached nodes.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := len(c.nodes)
	if _, ok := c.nodes[c.root]; ok && c.hideRoot {
		n--
	}
	return n
}

// Done is closed when the cache has stopped: after Close, or when the
// Session ended (NewTreeConfig: when Supervise ended). Err then says why.
func (c *Cache) Done() <-chan struct{} { return c.done }

// Err returns nil while the cache runs and after Close; otherwise why it
// stopped (the Session's end).
func (c *Cache) Err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

func (c *Cache) setErr(err error) {
	if errors.Is(err, context.Canceled) && c.ctx.Err() != nil {
		err = nil
	}
	c.errMu.Lock()
	c.err = err
	c.errMu.Unlock()
}

// Close stops the cache and waits, bounded by ctx, until its goroutines
// have ended; Events is then closed. It then removes the cache's recursive
// watch from the server (removeWatches), on servers that can remove it
// alone (ZooKeeper 3.9 and later); before 3.9 the server keeps it until the
// Session's connection is next lost or the Session ends, and the Session
// drops its notifications. One-shot watches stay on the server until they
// fire or the Session ends, but nothing sets them again: each costs the
// server one notification at most.
func (c *Cache) Close(ctx context.Context) error {
	c.cancel()
	finished := make(chan struct{})
	go func() {
		<-c.done
		c.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.watchMu.Lock()
	w := c.watch
	c.watch = nil
	c.watchMu.Unlock()
	if w == nil || c.sess.Err() != nil {
		return nil // the Session's end took the watch
	}
	if err := w.Remove(ctx); err != nil && c.sess.Err() == nil {
		return fmt.Errorf("cache: close %s: %w", c.root, err)
	}
	return nil
}
