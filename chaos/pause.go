package chaos

import (
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/event"
)

// outsideContinue is the Detail of a Resume event recorded because a paused
// client was found running before the harness continued it: something
// outside the harness sent it SIGCONT (on a shared machine, another
// program's cleanup; or the kernel, for a stopped process in an orphaned
// process group).
const outsideContinue = "continued by a signal from outside the harness"

// holdPaused stops c's process (SIGSTOP), records the Pause once the kernel
// reports it stopped, and keeps it stopped until resume is called, which
// records the Resume and continues it (SIGCONT). While it holds, it checks
// every few milliseconds that the process is still stopped: if something
// else continued it, the Resume is recorded when that is noticed (so the
// history shows when the process really ran) and the process is stopped
// again.
func (h *harness) holdPaused(c *client) (resume func(), err error) {
	if err := stopProc(c); err != nil {
		return nil, err
	}
	h.record(event.Event{Kind: event.Pause, Client: c.name})
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if c.proc.Exited() || c.proc.Paused() {
				continue
			}
			h.record(event.Event{Kind: event.Resume, Client: c.name, Detail: outsideContinue})
			h.logf("%s was continued by an outside signal; stopping it again", c.name)
			if err := stopProc(c); err != nil {
				h.problem("stopping %s again: %v", c.name, err)
				return
			}
			h.record(event.Event{Kind: event.Pause, Client: c.name, Detail: "stopped again"})
		}
	}()
	return func() {
		close(quit)
		<-done
		h.record(event.Event{Kind: event.Resume, Client: c.name})
		if err := c.proc.Resume(); err != nil {
			h.problem("resume %s: %v", c.name, err)
		}
	}, nil
}

// stopProc sends SIGSTOP and waits until the process is stopped.
func stopProc(c *client) error {
	if err := c.proc.Pause(); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for !c.proc.Paused() {
		if c.proc.Exited() || time.Now().After(deadline) {
			return fmt.Errorf("chaos: %s did not stop", c.name)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}
