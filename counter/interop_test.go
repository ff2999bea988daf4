package counter

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

func expect(t *testing.T, ctx context.Context, p *interop.Proc, prefix string) string {
	t.Helper()
	line, err := p.Expect(ctx, prefix)
	if err != nil {
		t.Fatalf("waiting for %q: %v\nstderr: %s", prefix, err, p.Stderr())
	}
	return line
}

func send(t *testing.T, p *interop.Proc, line string) {
	t.Helper()
	if err := p.Send(line); err != nil {
		t.Fatal(err)
	}
}

// waitCount waits until the watcher delivers value, for at most 30s.
func waitCount(t *testing.T, w *Watcher, value int32) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case got, ok := <-w.Changes():
			if !ok {
				t.Fatalf("watch ended before the count reached %d: %v", value, w.Err())
			}
			if got.Value == value {
				return
			}
		case <-deadline:
			t.Fatalf("the watch never delivered the count %d", value)
		}
	}
}

// Go and Curator's SharedCount read and write one counter, see each other's
// changes, and increment it concurrently without losing a step.
func TestSharedCountWithCurator(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess := connect(t)
	path := "/shared/count"
	java := interop.CompileJava(t, "testdata/SharedCountPeer.java").
		Start(t, cluster.ConnectString(), sess.Config().Chroot+path, "7")
	expect(t, ctx, java, "ready") // Curator created the node with its seed

	c, _ := New(sess, path)
	got, err := c.Get(ctx)
	if err != nil || got.Value != 7 {
		t.Fatalf("Get = %+v, %v; want Curator's seed 7", got, err)
	}
	w := c.Watch(ctx)
	defer w.Stop()
	waitCount(t, w, 7)

	// Go writes, Curator's listener sees it.
	if _, err := c.SetCount(ctx, 10); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, java, "changed 10")

	// Curator writes, Go's watch sees it.
	send(t, java, "set -20")
	expect(t, ctx, java, "set -20")
	waitCount(t, w, -20)

	// Versions agree: Curator's conditional write from a version Go has
	// since overwritten fails.
	send(t, java, "get")
	if line := expect(t, ctx, java, "count "); !strings.HasPrefix(line, "count -20 ") {
		t.Fatalf("Curator reads %q; want -20", line)
	}
	if _, err := c.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	send(t, java, "tryset 100")
	expect(t, ctx, java, "tryset false")

	// Concurrent increments from both sides.
	start, _ := c.Get(ctx)
	send(t, java, "add 40")
	for range 40 {
		if _, err := c.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, ctx, java, "added 40")
	if got, _ := c.Get(ctx); got.Value != start.Value+80 {
		t.Fatalf("after 40 + 40 increments: %d; want %d", got.Value, start.Value+80)
	}
}

// kazooPython makes interop.StartPython find a python3 with Kazoo: Debian's
// python3-kazoo lives in /usr/bin/python3, which a python3 installed
// elsewhere earlier in PATH does not see.
func kazooPython(t *testing.T) {
	if exec.Command("python3", "-c", "import kazoo").Run() == nil {
		return
	}
	if exec.Command("/usr/bin/python3", "-c", "import kazoo").Run() == nil {
		t.Setenv("PATH", "/usr/bin:"+os.Getenv("PATH"))
	}
}

// Go and Kazoo's Counter(support_curator=True) share one counter, including
// the empty node Kazoo creates.
func TestCounterWithKazoo(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	kazooPython(t)
	sess := connect(t)
	path := "/kazoo/count"
	py := interop.StartPython(t, "testdata/kazoo_counter.py", cluster.ConnectString(), sess.Config().Chroot+path)
	expect(t, ctx, py, "ready")

	send(t, py, "ensure") // an empty node
	expect(t, ctx, py, "ensured")
	c, _ := New(sess, path)
	if got, err := c.Get(ctx); err != nil || got != (Count{}) {
		t.Fatalf("Get of Kazoo's empty node = %+v, %v; want 0 at version 0", got, err)
	}

	send(t, py, "add 5")
	expect(t, ctx, py, "value 5")
	if got, err := c.Get(ctx); err != nil || got.Value != 5 {
		t.Fatalf("Get = %+v, %v; want 5", got, err)
	}
	if _, err := c.Add(ctx, -8); err != nil {
		t.Fatal(err)
	}
	send(t, py, "get")
	expect(t, ctx, py, "value -3")

	send(t, py, "addmany 40")
	for range 40 {
		if _, err := c.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, ctx, py, "added 40")
	if got, _ := c.Get(ctx); got.Value != 77 {
		t.Fatalf("after 40 + 40 increments: %d; want 77", got.Value)
	}
}
