package queue

import (
	"errors"
	"testing"

	"github.com/zkcoord/zkcoord"
)

// Every constructor takes the package's options; a lock path is refused,
// with a clear error, by the layouts that have no lock.
func TestLockPathOnlyForCuratorLayouts(t *testing.T) {
	sess := connect(t)
	lock := WithLockPath("/queue-locks")
	refuse := map[string]func() error{
		"New":         func() error { _, err := New(sess, "/q", lock); return err },
		"NewPriority": func() error { _, err := NewPriority(sess, "/q", lock); return err },
		"NewWork":     func() error { _, err := NewWork(sess, "/q", lock); return err },
		"NewSimple":   func() error { _, err := NewSimple(sess, "/q", lock); return err },
	}
	for name, f := range refuse {
		if err := f(); !errors.Is(err, zkcoord.ErrInvalidPath) {
			t.Errorf("%s with a lock path: %v, want ErrInvalidPath", name, err)
		}
	}
	if _, err := NewCurator(sess, "/q", lock); err != nil {
		t.Errorf("NewCurator with a lock path: %v", err)
	}
	if _, err := New(sess, "/q"); err != nil {
		t.Errorf("New without options: %v", err)
	}
}
