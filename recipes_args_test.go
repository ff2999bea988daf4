package zkcoord_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/barrier"
	"github.com/zkcoord/zkcoord/cache"
	"github.com/zkcoord/zkcoord/config"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/group"
	"github.com/zkcoord/zkcoord/lock"
	"github.com/zkcoord/zkcoord/node"
	"github.com/zkcoord/zkcoord/queue"
	"github.com/zkcoord/zkcoord/twophase"
)

// Every recipe's constructor refuses a nil Session and an invalid path with
// a clear error, before any I/O, instead of failing later with a nil
// pointer dereference.
func TestRecipesRejectBadArguments(t *testing.T) {
	ctx := context.Background()
	constructors := map[string]func(*zkcoord.Session, string) error{
		"barrier.New": func(s *zkcoord.Session, p string) error { _, err := barrier.New(s, p); return err },
		"barrier.NewDouble": func(s *zkcoord.Session, p string) error {
			_, err := barrier.NewDouble(s, p, 2)
			return err
		},
		"config.New":    func(s *zkcoord.Session, p string) error { _, err := config.New(s, p); return err },
		"counter.New":   func(s *zkcoord.Session, p string) error { _, err := counter.New(s, p); return err },
		"queue.New":     func(s *zkcoord.Session, p string) error { _, err := queue.New(s, p); return err },
		"lock.NewMutex": func(s *zkcoord.Session, p string) error { _, err := lock.NewMutex(s, p); return err },
		"group.Join": func(s *zkcoord.Session, p string) error {
			_, err := group.Join(ctx, s, p, "m", nil)
			return err
		},
		"group.NewRendezvous": func(s *zkcoord.Session, p string) error {
			_, err := group.NewRendezvous(ctx, s, p)
			return err
		},
		"twophase.Begin": func(s *zkcoord.Session, p string) error {
			_, err := twophase.Begin(ctx, s, p, []string{"a"})
			return err
		},
		"twophase.Join": func(s *zkcoord.Session, p string) error {
			_, err := twophase.Join(ctx, s, p, "a")
			return err
		},
	}
	sess := connect(t, zkcoord.Config{Servers: sharedServers()})
	for name, construct := range constructors {
		if err := construct(nil, "/x"); !errors.Is(err, zkcoord.ErrNilSession) {
			t.Errorf("%s(nil Session) = %v, want ErrNilSession", name, err)
		}
		for _, p := range []string{"", "x", "/", "/a/", "/a//b", "/a/../b"} {
			if err := construct(sess, p); !errors.Is(err, zkcoord.ErrInvalidPath) {
				t.Errorf("%s(%q) = %v, want ErrInvalidPath", name, p, err)
			}
		}
	}
}

// The forms that open their own Sessions refuse an invalid path before
// opening any.
func TestConfigFormsRejectBadPaths(t *testing.T) {
	ctx := context.Background()
	cfg := zkcoord.Config{Servers: []string{"127.0.0.1:1"}} // never dialled
	constructors := map[string]func(string) error{
		"cache.NewTreeConfig": func(p string) error { _, err := cache.NewTreeConfig(ctx, cfg, p); return err },
		"config.WatchConfig":  func(p string) error { _, err := config.WatchConfig(ctx, cfg, p); return err },
		"counter.WatchConfig": func(p string) error { _, err := counter.WatchConfig[int32](ctx, cfg, p); return err },
		"group.JoinConfig":    func(p string) error { _, err := group.JoinConfig(ctx, cfg, p, "m", nil); return err },
		"node.KeepConfig":     func(p string) error { _, err := node.KeepConfig(ctx, cfg, p, nil); return err },
	}
	for name, construct := range constructors {
		for _, p := range []string{"", "x", "/a/", "/a//b"} { // a cache may cache "/"
			if err := construct(p); !errors.Is(err, zkcoord.ErrInvalidPath) {
				t.Errorf("%s(%q) = %v, want ErrInvalidPath", name, p, err)
			}
		}
	}
}

// The forms that open their own Sessions fail with an invalid Config, which
// no new Session can fix: at once, or (the watchers) by ending with it.
func TestConfigFormsFailWithAnInvalidConfig(t *testing.T) {
	ctx := context.Background()
	var cfg zkcoord.Config // no servers
	constructors := map[string]func() error{
		"cache.NewTreeConfig": func() error { _, err := cache.NewTreeConfig(ctx, cfg, "/a"); return err },
		"group.JoinConfig":    func() error { _, err := group.JoinConfig(ctx, cfg, "/a", "m", nil); return err },
		"node.KeepConfig":     func() error { _, err := node.KeepConfig(ctx, cfg, "/a", nil); return err },
		"config.WatchConfig": func() error {
			w, err := config.WatchConfig(ctx, cfg, "/a")
			if err != nil {
				return err
			}
			for range w.Changes() {
			}
			return w.Err()
		},
		"counter.WatchConfig": func() error {
			w, err := counter.WatchConfig[int64](ctx, cfg, "/a")
			if err != nil {
				return err
			}
			for range w.Changes() {
			}
			return w.Err()
		},
	}
	for name, construct := range constructors {
		if err := construct(); !errors.Is(err, zkcoord.ErrInvalidConfig) {
			t.Errorf("%s with no servers = %v, want ErrInvalidConfig", name, err)
		}
	}
}
