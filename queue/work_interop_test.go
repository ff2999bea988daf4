package queue

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// A WorkQueue and Kazoo's LockingQueue share one queue: each takes what the
// other put, in one order, and never an item the other has claimed.
func TestWorkQueueWithKazoo(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	if exec.Command("python3", "-c", "import kazoo").Run() != nil && exec.Command("/usr/bin/python3", "-c", "import kazoo").Run() == nil {
		t.Setenv("PATH", "/usr/bin:"+os.Getenv("PATH"))
	}
	sess := connect(t)
	q := newWork(t, sess)
	py := interop.StartPython(t, "testdata/kazoo_locking_queue.py", cluster.ConnectString(), sess.Config().Chroot+"/work")
	say := func(cmd, want string) {
		t.Helper()
		if err := py.Send(cmd); err != nil {
			t.Fatal(err)
		}
		line, err := py.Expect(ctx, want)
		if err != nil || line != want {
			t.Fatalf("%s: got %q, %v; want %q\n%s", cmd, line, err, want, py.Stderr())
		}
	}
	if _, err := py.Expect(ctx, "ready"); err != nil {
		t.Fatalf("%v\n%s", err, py.Stderr())
	}

	// Kazoo puts; Go takes in priority order and acknowledges.
	say("put low 200", "put")
	say("put high 1", "put")
	c := take(t, ctx, q)
	if string(c.Data()) != "high" {
		t.Fatalf("Go took %q first; want high", c.Data())
	}
	if err := c.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	// Go holds "low"; Kazoo must not get it, and gets it once Go gives it back.
	c = take(t, ctx, q)
	say("get", "got none")
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
	say("get", "got low")
	// Kazoo holds it now; Go must not take it.
	if _, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Go took an item Kazoo holds: %v", err)
	}
	say("consume", "consumed True")

	// Go puts; Kazoo takes and consumes; nothing is left.
	if err := q.Put(ctx, []byte("from-go"), DefaultWorkPriority); err != nil {
		t.Fatal(err)
	}
	say("get", "got from-go")
	say("consume", "consumed True")
	if n, err := q.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len = %d, %v; want 0", n, err)
	}
}
