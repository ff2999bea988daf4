package console_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
)

// TestBrowserAdminBreaksLock breaks a lock from the page: the operator
// clicks "break", types the holder's node name into the confirmation, and
// the waiter gets the lock.
func TestBrowserAdminBreaksLock(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	s1, s2 := connect(t), connect(t)
	m1, _ := lock.NewMutex(s1, "/brk/lock")
	m2, _ := lock.NewMutex(s2, "/brk/lock")
	lease, err := m1.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := m2.Lock(ctx); got <- err }()

	srv, c := serveConsole(t, connect(t), console.Options{Admin: true})
	b := browser(t)
	node := zkcoord.Base(lease.Path())
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		dialogs []string
		ended   bool // set before wg.Wait: no answer starts after it
	)
	chromedp.ListenTarget(b, func(ev any) {
		d, ok := ev.(*page.EventJavascriptDialogOpening)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return
		}
		dialogs = append(dialogs, d.Message)
		wg.Add(1)
		go func() { // answering from the listener itself would deadlock
			defer wg.Done()
			_ = chromedp.Run(b, page.HandleJavaScriptDialog(true).WithPromptText(node))
		}()
	})
	t.Cleanup(func() {
		mu.Lock()
		ended = true
		mu.Unlock()
		wg.Wait()
	})
	run(t, b, time.Minute, chromedp.Navigate(c.AdminURL(srv.URL+"/")))
	shown(t, b, "/brk/lock", fmt.Sprintf(`c.querySelector(".holders").textContent === "0x%x"`, s1.ID()))
	screenshot(t, b, "admin.png", `[id="card:/brk/lock"]`)
	run(t, b, time.Minute, chromedp.Click(`[id="card:/brk/lock"] button[data-break]`, chromedp.ByQuery))
	if err := <-got; err != nil {
		t.Fatalf("the waiter did not get the lock: %v", err)
	}
	<-lease.Done()
	shown(t, b, "/brk/lock", fmt.Sprintf(`c.querySelector(".holders").textContent === "0x%x"`, s2.ID()))
	testkit.Eventually(t, 30*time.Second, "the result shown", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(dialogs) == 2
	})
	mu.Lock()
	t.Logf("dialogs: %q", dialogs)
	mu.Unlock()
}
