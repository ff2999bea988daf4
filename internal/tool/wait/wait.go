// Package wait is the test suites' one way to wait for a condition: it
// polls, observing state; it never orders events. Tests reach it through
// internal/tool/testkit, except the test kit's own foundations (zktest), which
// testkit imports.
package wait

import (
	"errors"
	"testing"
	"time"
)

// ErrNotYet is what a condition returns while it does not hold.
var ErrNotYet = errors.New("not yet")

// For polls cond until it returns nil, failing the test when d passes.
func For(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %v: %v", what, d, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Until is For for a condition that is simply true or false.
func Until(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	For(t, d, what, func() error {
		if cond() {
			return nil
		}
		return ErrNotYet
	})
}
