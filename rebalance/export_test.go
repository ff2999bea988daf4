package rebalance

import (
	"context"
	"sync"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// WriteAllocationForTest exposes the coordinator's conditional allocation
// write, so that a test can play a zombie coordinator.
func WriteAllocationForTest(ctx context.Context, sess *zkcoord.Session, root, group string, term int64, version int32, rec alloc.Record) error {
	lay, err := newLayout(zkcoord.Join(root, group))
	if err != nil {
		return err
	}
	_, err = writeAllocation(ctx, sess, lay, term, version, rec)
	return err
}

// PathsForTest returns the paths of a group's term, resources and barriers
// nodes and of its clients directory.
func PathsForTest(root, group string) (term, resources, barriers, clients string) {
	lay, _ := newLayout(zkcoord.Join(root, group))
	return lay.term(), lay.resources(), lay.barriers(), lay.clients()
}

// HandoverForTest returns the path of the handover mark of resource res.
func HandoverForTest(root, group, res string) string {
	lay, _ := newLayout(zkcoord.Join(root, group))
	return lay.handover(res)
}

// SetMaxAllocationForTest lowers the size limit of an encoded allocation,
// so that a test can outgrow it with a small group, until the test ends.
func SetMaxAllocationForTest(t interface{ Cleanup(func()) }, n int) {
	old := maxAllocation
	maxAllocation = n
	t.Cleanup(func() { maxAllocation = old })
}

// DropNextNotificationForTest returns an option that makes the client
// swallow the next notification of its predecessor's departure, as if
// ZooKeeper had lost it, and a function that reports whether one was
// swallowed.
func DropNextNotificationForTest() (Option, func() bool) {
	h := new(elect.Hooks)
	h.DropNextNotification()
	return func(o *options) { o.hooks = h }, h.Dropped
}

// EnsureGroupForTest makes sure a group's persistent nodes exist, as a
// joining client and an operator do first.
func EnsureGroupForTest(ctx context.Context, sess *zkcoord.Session, root, group string) error {
	lay, err := newLayout(zkcoord.Join(root, group))
	if err != nil {
		return err
	}
	return lay.ensure(ctx, sess)
}

// AcquireBarrierForTest takes the barrier at path for client owner, as a
// member taking a resource over does, and returns its fencing token.
func AcquireBarrierForTest(ctx context.Context, sess *zkcoord.Session, path, owner string) (int64, error) {
	t, err := acquireBarrier(ctx, sess, path, zkcoord.Join(zkcoord.Parent(path), "mark"), owner, 1)
	return t.token, err
}

// TakeOverForTest takes the barrier at path for client owner with the
// handover mark at mark, as a member taking a resource over does, and
// returns its fencing token and whether the previous barrier was released
// cleanly.
func TakeOverForTest(ctx context.Context, sess *zkcoord.Session, path, mark, owner string) (int64, bool, error) {
	t, err := acquireBarrier(ctx, sess, path, mark, owner, 1)
	return t.token, t.clean, err
}

// SetBeforeBarrierCreateHookForTest makes a take call f after it has
// read the handover mark and before it sends the transaction that creates
// its barrier, until the test ends.
func SetBeforeBarrierCreateHookForTest(t testing.TB, f func()) {
	testHookBeforeCreate = f
	t.Cleanup(func() { testHookBeforeCreate = nil })
}

// TakeOverHeldForTest is TakeOverForTest, returning the version of the
// handover mark that the take left instead of whether it was clean.
func TakeOverHeldForTest(ctx context.Context, sess *zkcoord.Session, path, mark, owner string) (int64, int32, error) {
	t, err := acquireBarrier(ctx, sess, path, mark, owner, 1)
	return t.token, t.held, err
}

// ReleaseAtVersionForTest sends the transaction with which a member
// releases, cleanly, the barrier at path that its take left with the
// mark at version held, once it has read the barrier at version.
func ReleaseAtVersionForTest(ctx context.Context, sess *zkcoord.Session, path, mark string, held, version int32) error {
	_, err := newRelease(path, mark, held, false, true).try(ctx, sess, version)
	return err
}

// ReleaseBarrierForTest releases the barrier at path with token as a
// member does once its resource stopped after a clean takeover.
func ReleaseBarrierForTest(ctx context.Context, sess *zkcoord.Session, path, mark string, token int64, held int32) error {
	return releaseBarrier(ctx, sess, path, mark, token, held, false, true)
}

// MarkForTest is a handover mark as read before a take.
type MarkForTest = mark

// ReadMarkForTest reads the handover mark at path as a member does before
// it creates a barrier.
func ReadMarkForTest(ctx context.Context, sess *zkcoord.Session, path string) (MarkForTest, error) {
	return readMark(ctx, sess, path)
}

// CreateBarrierForTest sends the transaction that creates the barrier at
// path for owner, provided the mark at markPath is still mk, and returns
// the barrier's token and whether the takeover counts as clean.
func CreateBarrierForTest(ctx context.Context, sess *zkcoord.Session, path, markPath, owner string, mk MarkForTest) (int64, bool, error) {
	b, err := createBarrier(ctx, sess, path, markPath, owner, 1, mk)
	if err != nil {
		return 0, false, err
	}
	return b.st.Czxid, b.info.Clean, nil
}

// ReadGroupForTest reads what a coordinator reads before a rebalancing.
func ReadGroupForTest(ctx context.Context, sess *zkcoord.Session, root, group string) error {
	lay, err := newLayout(zkcoord.Join(root, group))
	if err != nil {
		return err
	}
	_, err = readGroup(ctx, sess, lay)
	return err
}

// BarrierWatchFault makes a client's barrier watcher fail one re-read of a
// resource's barrier with an error of a kind the watcher does not expect,
// as an answer of the server it cannot interpret would. The zero value is
// ready to use; pass Option to the client.
type BarrierWatchFault struct {
	mu  sync.Mutex
	res string
	err error
	hit chan struct{}
}

// Option attaches the fault to a client.
func (f *BarrierWatchFault) Option() Option {
	return func(o *options) { o.barrierFault = f.take }
}

// FailNext arms the fault for the next re-read of the barrier of res. The
// returned channel is closed once a re-read has failed with err.
func (f *BarrierWatchFault) FailNext(res string, err error) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.res, f.err, f.hit = res, err, make(chan struct{})
	return f.hit
}

func (f *BarrierWatchFault) take(res string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hit == nil || res != f.res {
		return nil
	}
	close(f.hit)
	f.hit = nil
	return f.err
}
