package cli

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestMessage(t *testing.T) {
	otherKind := errors.New("lock: another kind of lock uses this path")
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("acquiring the lock /x: %w", fmt.Errorf("lock: %s: %w", "/x", otherKind)),
			"acquiring the lock /x: another kind of lock uses this path"},
		{fmt.Errorf("counter add /c: %w", errors.New("counter: overflow: 1 + 2147483647")), "counter add /c: overflow: 1 + 2147483647"},
		{errors.New("zkcoord: no node"), "no node"},
		{fmt.Errorf("listing /q: %w", context.DeadlineExceeded), "listing /q: timed out"},
		{fmt.Errorf("watching /w: %w", context.Canceled), "watching /w: interrupted"},
		{errors.New("lock break: missing PATH"), "lock break: missing PATH"},
		{errors.New("lock: missing PATH"), "lock: missing PATH"},
		{errors.New("resources rm g: r1: no such resource"), "resources rm g: r1: no such resource"},
		{errors.New("queue"), "queue"},
	} {
		if got := Message(c.err); got != c.want {
			t.Errorf("Message(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}
