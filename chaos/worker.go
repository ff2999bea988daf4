package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// worker uses one resource through the service, every interval, from the
// moment its owner acquired it until it is stopped. A well-behaved worker
// also stops by itself when ctx ends (the resource was taken away) or the
// service refuses a use (the token is stale: someone newer owns it).
//
// The owner records Acquire before starting a worker and Release only after
// the worker's done channel closed, so a recorded holding always contains
// every use.
type worker struct {
	stopCh   chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// whileHeld returns the context for a worker's uses of what it holds: it
// ends when done closes (the lease, leadership or claim ended) or when
// cancel is called.
func whileHeld(done <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// startWorker starts using resource with token. With stubborn set (the
// late-stop bug) it ignores ctx and refusals and stops only when told.
func startWorker(ctx context.Context, svc *serviceConn, log *slog.Logger, resource string, token int64,
	every time.Duration, stubborn bool) *worker {
	w := &worker{stopCh: make(chan struct{}), done: make(chan struct{})}
	go w.run(ctx, svc, log, resource, token, every, stubborn)
	return w
}

func (w *worker) run(ctx context.Context, svc *serviceConn, log *slog.Logger, resource string, token int64,
	every time.Duration, stubborn bool) {
	defer close(w.done)
	if stubborn {
		ctx = context.Background()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.stopCh:
			return
		case <-ctx.Done():
			return
		default:
		}
		err := svc.use(resource, token)
		switch {
		case errors.Is(err, errStale):
			log.Warn("use refused", "resource", resource, "token", token, "err", err)
			if !stubborn {
				return // someone newer owns it; wait to be told
			}
		case err != nil:
			fatal(log, "service connection failed", err)
		}
		select {
		case <-w.stopCh:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stop stops the worker and waits until it has made its last use.
func (w *worker) stop() {
	w.stopOnce.Do(func() { close(w.stopCh) })
	<-w.done
}

// stopLate is stop after linger more time of use: the late-stop bug.
func (w *worker) stopLate(linger time.Duration) {
	time.Sleep(linger)
	w.stop()
}

// lateStopLinger is how long a client with the late-stop bug keeps using a
// resource it was told to give up.
const lateStopLinger = 1500 * time.Millisecond

// fatal ends a client process that cannot go on (its service connection
// broke: the harness is gone or broken).
func fatal(log *slog.Logger, msg string, err error) {
	log.Error(msg, "err", err)
	fmt.Fprintln(os.Stderr, "fatal:", msg+":", err)
	os.Exit(3)
}
