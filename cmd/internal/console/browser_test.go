package console_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/barrier"
	"github.com/zkcoord/zkcoord/cmd/internal/browsertest"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/discovery"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/group"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
	"github.com/zkcoord/zkcoord/queue"
)

var screenshots = flag.Bool("console.screenshots", false, "write screenshots of the console to docs/ui/")

// updateBound is the sanity bound on the time from a change to the page
// showing it; the figures measured are logged (they are far lower).
const updateBound = 5 * time.Second

// browser starts a headless Chromium, closed when the test ends.
func browser(t *testing.T) context.Context { return browsertest.Start(t) }

// run runs actions in the browser, bounded by d.
func run(t *testing.T, ctx context.Context, d time.Duration, actions ...chromedp.Action) {
	t.Helper()
	browsertest.Run(t, ctx, d, actions...)
}

// shown waits until the card of path satisfies the JavaScript predicate
// test (given the card as c) and returns when the page rendered it.
func shown(t *testing.T, ctx context.Context, path, test string) time.Time {
	t.Helper()
	ms := browsertest.Wait(t, ctx, 40*time.Second, browsertest.Card(path, test), "card:"+path)
	return time.UnixMilli(int64(ms))
}

// measured logs the time from a change to the page showing it and checks
// it against the sanity bound.
func measured(t *testing.T, what string, from, to time.Time) {
	t.Helper()
	d := to.Sub(from)
	t.Logf("%s: shown %v after the change", what, d.Round(time.Millisecond))
	if d > updateBound {
		t.Errorf("%s: shown %v after the change, bound %v", what, d, updateBound)
	}
}

// screenshot writes a PNG of the page, or of the element sel, to docs/ui/
// when -console.screenshots is given.
func screenshot(t *testing.T, ctx context.Context, name, sel string) {
	t.Helper()
	if !*screenshots {
		return
	}
	var png []byte
	if sel == "" {
		run(t, ctx, time.Minute, chromedp.FullScreenshot(&png, 100))
	} else {
		run(t, ctx, time.Minute, chromedp.Screenshot(sel, &png, chromedp.ByQuery))
	}
	out := filepath.Join("..", "..", "..", "docs", "ui", name) // the repository's docs/ui
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

// TestBrowserShowsChanges drives the page in headless Chromium while real
// workers change leader, rebalance and hand a lock over, and measures how
// soon the page shows each change.
func TestBrowserShowsChanges(t *testing.T) {
	ctx := testkit.Ctx(t, 3*time.Minute)
	s1, s2 := connect(t), connect(t)

	e1, _ := election.New(s1, "/web/billing-leader", election.WithID("billing-a"))
	e2, following := standingBy(s2, "/web/billing-leader", "billing-b")
	lead, err := e1.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go e2.Campaign(ctx) // stands by behind the leader until the test ends
	select {
	case <-following:
	case <-ctx.Done():
		t.Fatal("the second candidate never stood by")
	}
	m1, _ := lock.NewMutex(s1, "/web/nightly-lock")
	m2, _ := lock.NewMutex(s2, "/web/nightly-lock")
	if _, err := m1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() { _, err := m2.Lock(ctx); second <- err }()
	startWorkers(t, "/web/rebalance", "partitions", 2, "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7")
	extras(t, ctx, s1, s2)

	srv := serve(t, connect(t), console.Options{Paths: []string{"/web", "barrier:/web/deploy-gate"}}).URL
	b := browser(t)
	run(t, b, time.Minute, chromedp.Navigate(srv))
	shown(t, b, "/web/billing-leader", `c.querySelector(".leader").textContent === "billing-a" && c.textContent.includes("acting")`)
	shown(t, b, "/web/nightly-lock", fmt.Sprintf(`c.querySelector(".holders").textContent === "0x%x"`, s1.ID()))
	shown(t, b, "/web/rebalance/partitions", `c.querySelectorAll("tr[data-member]").length === 2 && c.querySelector(".settled")`)

	// A leader change.
	t0 := time.Now()
	if err := lead.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	measured(t, "leader change", t0, shown(t, b, "/web/billing-leader", `c.querySelector(".leader").textContent === "billing-b"`))

	// A rebalancing: a third worker joins.
	var gen string
	run(t, b, time.Minute, chromedp.Text(`[id="card:/web/rebalance/partitions"] .generation`, &gen))
	t0 = time.Now()
	startWorker(t, "/web/rebalance", "partitions", "worker-2")
	rebalanced := shown(t, b, "/web/rebalance/partitions",
		fmt.Sprintf(`c.querySelector(".generation").textContent !== %q && c.querySelectorAll("tr[data-member]").length === 3`, gen))
	screenshot(t, b, "group.png", `[id="card:/web/rebalance/partitions"]`)
	measured(t, "rebalancing (from the join; the coordinator waits its minimum interval first)", t0, rebalanced)
	// The allocation node's mtime is when the coordinator wrote the new
	// allocation: the page's own delay is measured from there.
	if _, st, err := s1.Get(ctx, "/web/rebalance/partitions/resources"); err == nil {
		measured(t, "rebalancing (from the allocation write)", time.UnixMilli(st.Mtime), rebalanced)
	}
	measured(t, "rebalancing settled", t0, shown(t, b, "/web/rebalance/partitions",
		`c.querySelectorAll("tr[data-member]").length === 3 && c.querySelector(".settled") && !c.querySelector(".chip.wait")`))

	// A lock handoff.
	t0 = time.Now()
	if err := m1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	measured(t, "lock handoff", t0, shown(t, b, "/web/nightly-lock", fmt.Sprintf(`c.querySelector(".holders").textContent === "0x%x"`, s2.ID())))
	if err := <-second; err != nil {
		t.Fatal(err)
	}

	// A service instance registers and goes away.
	shown(t, b, "/web/services/billing-api", `c.querySelectorAll("tr[data-instance]").length === 1`)
	d, _ := discovery.New(s2, "/web/services")
	t0 = time.Now()
	reg, err := d.Register(ctx, discovery.Instance{Name: "billing-api", Address: "10.0.0.7", Port: 8080, SSLPort: 8443,
		Payload: json.RawMessage(`{"zone":"eu-2","version":"1.4.2"}`)})
	if err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf(`c.querySelector('tr[data-instance="%s"]')`, reg.Instance().ID)
	measured(t, "instance registered", t0, shown(t, b, "/web/services/billing-api",
		row+` && `+row+`.querySelector(".addr").textContent === "10.0.0.7:8080"`))
	screenshot(t, b, "service.png", `[id="card:/web/services/billing-api"]`)
	t0 = time.Now()
	if err := reg.Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	measured(t, "instance unregistered", t0, shown(t, b, "/web/services/billing-api",
		`!`+row+` && c.querySelectorAll("tr[data-instance]").length === 1`))

	// A group member joins and leaves.
	shown(t, b, "/web/workers", `c.querySelector('tr[data-member="alpha"]')`)
	t0 = time.Now()
	beta, err := group.Join(ctx, s2, "/web/workers", "beta", []byte("10.0.0.8:7000"))
	if err != nil {
		t.Fatal(err)
	}
	measured(t, "member joined", t0, shown(t, b, "/web/workers",
		`c.querySelector('tr[data-member="beta"]')?.textContent.includes("10.0.0.8:7000")`))
	t0 = time.Now()
	if err := beta.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	measured(t, "member left", t0, shown(t, b, "/web/workers",
		`!c.querySelector('tr[data-member="beta"]') && c.querySelector('tr[data-member="alpha"]')`))

	// The timeline lists them all.
	var timeline string
	run(t, b, time.Minute,
		chromedp.Poll(`document.querySelectorAll("#timeline li").length >= 7`, nil, chromedp.WithPollingTimeout(40*time.Second)),
		chromedp.Text("#timeline", &timeline))
	for _, want := range []string{"leader: billing-b", "rebalanced: generation", "granted to",
		"instance " + reg.Instance().ID + " registered at 10.0.0.7:8080 (ssl 8443)",
		"instance " + reg.Instance().ID + " unregistered", "member beta joined", "member beta left"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %q:\n%s", want, timeline)
		}
	}
	screenshot(t, b, "console.png", "")
}

// extras adds one of each other recipe, so that the page shows them all:
// a read/write lock, a semaphore, a queue, a counter, a barrier, a double
// barrier still gathering, a service with one instance (named by a UUID,
// like the double barrier's member) and a group with one member.
func extras(t *testing.T, ctx context.Context, s1, s2 *zkcoord.Session) {
	t.Helper()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	rw1, _ := lock.NewRWMutex(s1, "/web/config-rwlock")
	rw2, _ := lock.NewRWMutex(s2, "/web/config-rwlock")
	_, err := rw1.RLock(ctx)
	check(err)
	_, err = rw2.RLock(ctx)
	check(err)
	sem, _ := lock.NewSemaphore(s1, "/web/db-slots", 3)
	for range 2 {
		_, err := sem.Acquire(ctx)
		check(err)
	}
	q, _ := queue.New(s2, "/web/email-jobs")
	for i := range 5 {
		_, err := q.Put(ctx, []byte(fmt.Sprint("job ", i)))
		check(err)
	}
	cnt, _ := counter.New(s1, "/web/deploys")
	_, err = cnt.Add(ctx, 42)
	check(err)
	gate, _ := barrier.New(s1, "/web/deploy-gate")
	check(gate.Set(ctx))
	d, _ := barrier.NewDouble(s2, "/web/batch-start", 3)
	enterCtx, cancel := context.WithCancel(ctx)
	entered := make(chan struct{})
	go func() {
		defer close(entered)
		_ = d.Enter(enterCtx) // waits for two more members, until the test ends
	}()
	t.Cleanup(func() { cancel(); <-entered })
	svc, _ := discovery.New(s1, "/web/services")
	_, err = svc.Register(ctx, discovery.Instance{Name: "billing-api", Address: "10.0.0.5", Port: 8080,
		Payload: json.RawMessage(`{"zone":"eu-1","version":"1.4.1"}`), URISpec: "{scheme}://{address}:{port}/v1"})
	check(err)
	alpha, err := group.Join(ctx, s1, "/web/workers", "alpha", []byte("10.0.0.5:7000"))
	check(err)
	t.Cleanup(func() { _ = alpha.Leave(testkit.Ctx(t, time.Minute)) })
}

// TestBrowserShowsDisconnected: while the console is out of contact with
// ZooKeeper, the page says so and keeps the last state; back in contact,
// it says live again.
func TestBrowserShowsDisconnected(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	cnt, _ := counter.New(connect(t), "/cut/count")
	if _, err := cnt.Add(ctx, 7); err != nil {
		t.Fatal(err)
	}
	proxy := cluster.NewProxy(t)
	srv := serve(t, testkit.Connect(t, proxy.Servers()), console.Options{})
	b := browser(t)
	run(t, b, time.Minute, chromedp.Navigate(srv.URL))
	shown(t, b, "/cut/count", `c.textContent.includes("7")`)
	conn := func(want string) {
		t.Helper()
		browsertest.Wait(t, b, 40*time.Second, fmt.Sprintf(`document.getElementById("conn").textContent.startsWith(%q)`, want), "conn")
	}
	conn("live")
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	conn("disconnected")
	shown(t, b, "/cut/count", `c.textContent.includes("7")`)
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	conn("live")
}

// TestBrowserEmptyThenFound: a console whose root does not exist yet says
// where it looks, and shows the recipes once they are created there.
func TestBrowserEmptyThenFound(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	srv := serve(t, connect(t), console.Options{Root: "/later/root"})
	b := browser(t)
	run(t, b, time.Minute, chromedp.Navigate(srv.URL))
	browsertest.Wait(t, b, 40*time.Second,
		`document.getElementById("empty").offsetParent !== null && document.getElementById("empty").textContent.includes("/later/root")`, "empty")
	cnt, _ := counter.New(connect(t), "/later/root/app/count")
	if _, err := cnt.Add(ctx, 4); err != nil {
		t.Fatal(err)
	}
	shown(t, b, "/later/root/app/count", `c.textContent.includes("4")`)
	browsertest.Wait(t, b, 40*time.Second, `document.getElementById("empty").offsetParent === null`, "empty")
}
