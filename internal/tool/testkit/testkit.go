// Package testkit holds the small helpers that the recipe packages' tests
// share: a Session per test, in a chroot of its own or as configured,
// contexts bound to the test, and waiting on a condition with a deadline.
package testkit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/wait"
)

// SessionTimeout is long enough for a loaded machine: a Session declares
// itself lost after 2/3 of it without a server response, so a server
// stalled for a few seconds (a busy 2-core machine running JVMs) would end
// a shorter session. Tests about loss expire or cut sessions explicitly.
const SessionTimeout = 20 * time.Second

// Connect opens a Session chrooted to a directory private to the test and
// closes it when the test ends. mod may adjust the Config.
func Connect(t testing.TB, servers []string, mod ...func(*zkcoord.Config)) *zkcoord.Session {
	t.Helper()
	return Open(t, Config(t, servers, mod...))
}

// Open opens a Session with cfg as it is and closes it when the test ends.
func Open(t testing.TB, cfg zkcoord.Config) *zkcoord.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := zkcoord.Connect(ctx, cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		sess.Close(ctx)
	})
	return sess
}

// Config is the Config Connect opens a Session with, for the recipes'
// forms that open their own Sessions (the ...Config constructors).
func Config(t testing.TB, servers []string, mod ...func(*zkcoord.Config)) zkcoord.Config {
	cfg := zkcoord.Config{
		Servers:        servers,
		SessionTimeout: SessionTimeout,
		Chroot:         Chroot(t),
	}
	for _, f := range mod {
		f(&cfg)
	}
	return cfg
}

var (
	chrootMu sync.Mutex
	chroots  = map[testing.TB]string{}
	runs     int
)

// Chroot returns a directory private to one run of a test, so that
// -count=N runs do not see each other's nodes.
func Chroot(t testing.TB) string {
	chrootMu.Lock()
	defer chrootMu.Unlock()
	if c, ok := chroots[t]; ok {
		return c
	}
	runs++
	c := fmt.Sprintf("/%s-%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), runs)
	chroots[t] = c
	t.Cleanup(func() {
		chrootMu.Lock()
		delete(chroots, t)
		chrootMu.Unlock()
	})
	return c
}

// Ctx returns a context that ends after d or when the test ends.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// ErrNotYet is what a WaitFor condition returns while it does not hold.
var ErrNotYet = wait.ErrNotYet

// WaitFor polls cond until it returns nil, failing the test when d passes.
// It observes state; it does not order events.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	wait.For(t, d, what, cond)
}

// Eventually is WaitFor for a condition that is simply true or false.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.Until(t, d, what, cond)
}
