package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/lock"
)

// Kazoo's ReadLock and WriteLock share one read/write lock with an
// RWMutex: readers of both hold together, a writer of either waits for
// them.
func TestInteropKazooRWMutex(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	sess, dir, py, expect, send := startKazooRW(t, ctx)
	rw, err := lock.NewRWMutex(sess, dir)
	if err != nil {
		t.Fatal(err)
	}

	// A Kazoo reader and a Go reader hold together; a Go writer waits.
	send("read")
	expect("read held")
	r, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writer, _ := lock.NewRWMutex(connect(t), dir)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := writer.Lock(short); err == nil {
		t.Fatal("a Go writer got the lock while a Kazoo reader held it")
	}
	if err := r.Release(ctx); err != nil {
		t.Fatal(err)
	}
	send("release")
	expect("released")

	// A Go reader holds; a Kazoo writer waits for it.
	r, err = rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	send("write")
	wait, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	if line, err := py.Expect(wait, "write held"); err == nil {
		t.Fatalf("the Kazoo writer got the lock while a Go reader held it: %q", line)
	}
	cs, err := rw.Contenders(ctx)
	if err != nil || len(cs) != 2 || !cs[0].Holds || cs[1].Holds || !cs[1].Writer {
		t.Fatalf("contenders %+v, %v; want the Go reader holding and Kazoo's writer waiting", cs, err)
	}
	if err := r.Release(ctx); err != nil {
		t.Fatal(err)
	}
	expect("write held")
	send("release")
	expect("released")
}

// A Mutex refuses a path where Kazoo's ReadLock holds (another kind of
// lock), and a Semaphore one where Kazoo's WriteLock holds; a Mutex still
// queues behind Kazoo's WriteLock, whose nodes are also Kazoo's Lock's.
func TestInteropKazooOtherKind(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	sess, dir, _, expect, send := startKazooRW(t, ctx)
	m := newMutex(t, sess, dir)

	send("read")
	expect("read held")
	if _, err := m.Lock(ctx); !errors.Is(err, lock.ErrOtherKind) {
		t.Fatalf("Mutex beside Kazoo's ReadLock: %v, want ErrOtherKind", err)
	}
	send("release")
	expect("released")

	send("write")
	expect("write held")
	if _, err := newSem(t, sess, dir, 2).Acquire(ctx); !errors.Is(err, lock.ErrOtherKind) {
		t.Fatalf("Semaphore beside Kazoo's WriteLock: %v, want ErrOtherKind", err)
	}
	if _, err := m.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("Mutex TryLock behind Kazoo's WriteLock: %v, want ErrLocked", err)
	}
	send("release")
	expect("released")
}

// startKazooRW starts the Kazoo peer of testdata/kazoo_rw.py on a new
// directory and waits for it: expect waits for its next line, send gives it
// a command; py is the peer itself.
func startKazooRW(t *testing.T, ctx context.Context) (sess *zkcoord.Session, dir string, py *interop.Proc, expect, send func(string)) {
	t.Helper()
	sess = connect(t)
	dir = testDir(t)
	if err := sess.EnsurePath(ctx, dir); err != nil {
		t.Fatal(err)
	}
	py = interop.StartPython(t, "testdata/kazoo_rw.py", cluster.ConnectString(), sess.Config().Chroot+dir)
	expect = func(want string) {
		t.Helper()
		line, err := py.Expect(ctx, want)
		if err != nil || line != want {
			t.Fatalf("got %q, %v; want %q\n%s", line, err, want, py.Stderr())
		}
	}
	send = func(cmd string) {
		t.Helper()
		if err := py.Send(cmd); err != nil {
			t.Fatal(err)
		}
	}
	expect("ready")
	return sess, dir, py, expect, send
}
