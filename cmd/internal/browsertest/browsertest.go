// Package browsertest drives the web console in a headless Chromium for
// tests: it starts the browser and waits for what the page shows.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Start starts a headless Chromium with a fresh profile, closed when the
// test ends. A missing Chromium skips the test, except in CI, where it
// fails.
func Start(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		path, err = exec.LookPath("/usr/bin/chromium")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is missing (apt-get install chromium, or make deps): %v", err)
		}
		t.Skipf("chromium is missing: %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx)
		cancel()
		cancelAlloc()
	})
	// Start the browser now, on ctx itself: the browser lives as long as
	// the context of the first Run.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Run runs actions in the browser, bounded by d.
func Run(t *testing.T, ctx context.Context, d time.Duration, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// Wait waits, at most d, until the JavaScript expression expr is truthy
// and returns its value decoded into a float64 (0 for true). On timeout it
// fails the test with the start of the text of the element with id (the
// page's body if none).
func Wait(t *testing.T, ctx context.Context, d time.Duration, expr, id string) float64 {
	t.Helper()
	var v any
	pctx, cancel := context.WithTimeout(ctx, d+5*time.Second)
	defer cancel()
	err := chromedp.Run(pctx, chromedp.Poll(expr, &v, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(d)))
	if err != nil {
		var text string
		_ = chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`(document.getElementById(%q) || document.body).textContent.slice(0, 2000)`, id), &text))
		t.Fatalf("page never showed %s: %v; it shows: %s", expr, err, text)
	}
	f, _ := v.(float64)
	return f
}

// Card returns the expression that is the page's rendering time (ms since
// the epoch) of the card of the recipe at path once it satisfies test, a
// JavaScript predicate of the card given as c, and false until then.
func Card(path, test string) string {
	return fmt.Sprintf(`(() => { const c = document.getElementById(%q); return c && (%s) ? Number(c.dataset.rendered) : false; })()`,
		"card:"+path, test)
}
