package lease

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// clock is a settable time for WithClock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestObtainRenewDenyExpire(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	clk := &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	try := func(id string) Lease {
		t.Helper()
		l, err := TryAcquire(ctx, sess, "/jobs/hourly", time.Hour, WithID(id), WithClock(clk.Now))
		if err != nil {
			t.Fatalf("TryAcquire(%s): %v", id, err)
		}
		return l
	}
	if l := try("a"); !l.Obtained || l.Holder != "a" || !l.End.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("first TryAcquire = %+v", l)
	}
	clk.Add(10 * time.Minute)
	if l := try("b"); l.Obtained || l.Holder != "a" {
		t.Fatalf("TryAcquire by another id while held = %+v", l)
	}
	if l := try("a"); !l.Obtained || !l.End.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("renewal = %+v", l)
	}
	clk.Add(time.Hour)
	if l := try("b"); !l.Obtained || l.Holder != "b" {
		t.Fatalf("TryAcquire after expiry = %+v", l)
	}
	if l := try("a"); l.Obtained || l.Holder != "b" {
		t.Fatalf("the old holder after expiry = %+v", l)
	}
}

// Of many clients racing for one expired lease, exactly one obtains it.
func TestOneWinnerAmongRacers(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	const n = 8
	var wg sync.WaitGroup
	results := make([]Lease, n)
	errs := make([]error, n)
	for i := range n {
		sess := connect(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = TryAcquire(ctx, sess, "/race", time.Minute, WithID(string(rune('a'+i))))
		}()
	}
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		if results[i].Obtained {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d clients obtained the lease; want exactly 1: %+v", winners, results)
	}
}

// Foreign data is never overwritten.
func TestForeignDataIsLeftAlone(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	if err := sess.EnsurePath(ctx, "/bad/lease_holder"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Set(ctx, "/bad/lease_holder", []byte("not json"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := TryAcquire(ctx, sess, "/bad", time.Minute, WithID("a")); !errors.Is(err, zkcoord.ErrBadData) {
		t.Fatalf("TryAcquire over corrupt data = %v; want ErrBadData", err)
	}
	newer := `{"version": 2, "holder": "future", "end": "whenever"}`
	if _, err := sess.Set(ctx, "/bad/lease_holder", []byte(newer), -1); err != nil {
		t.Fatal(err)
	}
	if l, err := TryAcquire(ctx, sess, "/bad", time.Minute, WithID("a")); err != nil || l.Obtained {
		t.Fatalf("TryAcquire over a newer format = %+v, %v; want not obtained", l, err)
	}
	if data, _, _ := sess.Get(ctx, "/bad/lease_holder"); string(data) != newer {
		t.Fatalf("the newer record was overwritten: %q", data)
	}
	for _, bad := range []struct {
		path string
		d    time.Duration
	}{{"/", time.Minute}, {"x", time.Minute}, {"/ok", time.Millisecond}} {
		if _, err := TryAcquire(ctx, sess, bad.path, bad.d); err == nil {
			t.Fatalf("TryAcquire(%q, %v) succeeded", bad.path, bad.d)
		}
	}
	if _, err := TryAcquire(context.Background(), nil, "/x", time.Minute); !errors.Is(err, zkcoord.ErrNilSession) {
		t.Fatalf("TryAcquire with a nil Session = %v", err)
	}
}

// Go and Kazoo's NonBlockingLease share one lease.
func TestWithKazoo(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess := connect(t)
	path := "/kazoo/lease"
	py := interop.StartPython(t, "testdata/kazoo_lease.py", cluster.ConnectString(), sess.Config().Chroot+path)
	if _, err := py.Expect(ctx, "ready"); err != nil {
		t.Fatalf("%v\n%s", err, py.Stderr())
	}
	ask := func(line string) string {
		t.Helper()
		if err := py.Send(line); err != nil {
			t.Fatal(err)
		}
		got, err := py.Expect(ctx, "lease ")
		if err != nil {
			t.Fatalf("%v\n%s", err, py.Stderr())
		}
		return got
	}
	// Kazoo takes it for an hour; Go is denied and told who holds it.
	if got := ask("take kazoo 3600"); got != "lease True" {
		t.Fatalf("Kazoo: %q", got)
	}
	l, err := TryAcquire(ctx, sess, path, time.Hour, WithID("go"))
	if err != nil || l.Obtained || l.Holder != "kazoo" || time.Until(l.End) < 59*time.Minute {
		t.Fatalf("Go while Kazoo holds = %+v, %v", l, err)
	}
	// Two hours later (by Go's clock) the lease has expired; Go takes it
	// and Kazoo, at the real time, is denied.
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	if l, err := TryAcquire(ctx, sess, path, time.Hour, WithID("go"), WithClock(later)); err != nil || !l.Obtained {
		t.Fatalf("Go after expiry = %+v, %v", l, err)
	}
	if got := ask("take kazoo 3600"); got != "lease False" {
		t.Fatalf("Kazoo while Go holds: %q", got)
	}
	// Go renews with its own id; Kazoo renews its own after Go's is gone.
	if l, err := TryAcquire(ctx, sess, path, time.Hour, WithID("go"), WithClock(later)); err != nil || !l.Obtained {
		t.Fatalf("Go renewing = %+v, %v", l, err)
	}
}

// envOtherProcess makes the test binary a second process on this host that
// asks for the lease at the path it names, with the default id, and
// prints what it got (see otherProcess).
const envOtherProcess = "ZKCOORD_LEASE_OTHER_PROCESS"

// otherProcess is the test binary run by TestDefaultIDIsPerProcess: it
// asks for the lease at path with the default id and prints
// "obtained=<bool> holder=<id>".
func otherProcess(path string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: strings.Split(os.Getenv(zktest.EnvServers), ",")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sess.Close(ctx)
	l, err := TryAcquire(ctx, sess, path, time.Hour)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("obtained=%v holder=%s\n", l.Obtained, l.Holder)
	return 0
}

// Without WithID, two processes on one host are two holders: the second
// is told that the first holds the lease, while the first renews it.
func TestDefaultIDIsPerProcess(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t, func(c *zkcoord.Config) { c.Chroot = "" })
	path := "/lease-tests/per-process"
	l, err := TryAcquire(ctx, sess, path, time.Hour)
	if err != nil || !l.Obtained {
		t.Fatalf("first TryAcquire = %+v, %v", l, err)
	}
	host, _ := os.Hostname()
	if !strings.HasPrefix(l.Holder, host) {
		t.Errorf("default id %q does not start with the host name %q", l.Holder, host)
	}
	if again, err := TryAcquire(ctx, sess, path, time.Hour); err != nil || !again.Obtained || again.Holder != l.Holder {
		t.Fatalf("the same process asking again = %+v, %v; want a renewal", again, err)
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envOtherProcess+"="+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the other process: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "obtained=false holder="+l.Holder; got != want {
		t.Fatalf("another process on this host got %q, want %q", got, want)
	}
}
