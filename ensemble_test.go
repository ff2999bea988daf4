package zkcoord_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// Connect warns when the ensemble's syncLimit × tickTime leaves a follower
// cut off from the leader answering the Session until after the leader may
// have expired it, and stays quiet when the timeout leaves room for it.
func TestConnectChecksEnsembleTiming(t *testing.T) {
	c := zktest.Start(t, zktest.WithServers(3))
	// zktest's ensembles: tickTime 100ms, syncLimit 30, so a cut-off
	// follower answers for up to 3s.
	risky := &logRecords{}
	connect(t, zkcoord.Config{Servers: c.Servers(), SessionTimeout: 6 * time.Second, Logger: slog.New(risky)})
	testkit.Eventually(t, 20*time.Second, "the ensemble timing warning", func() bool {
		return risky.has(slog.LevelWarn, "follower cut off")
	})

	safe := &logRecords{}
	connect(t, zkcoord.Config{Servers: c.Servers(), SessionTimeout: 20 * time.Second, LostAfter: 0.5, Logger: slog.New(safe)})
	testkit.Eventually(t, 20*time.Second, "the ensemble timing check", func() bool {
		return safe.has(slog.LevelDebug, "ensemble timing leaves Lost before expiry")
	})
	if safe.has(slog.LevelWarn, "follower cut off") {
		t.Fatal("warned although the timeout leaves room for a cut-off follower")
	}
}

// logRecords is a slog.Handler that keeps every record.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}

func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// has reports whether a record of the level whose message contains msg
// was logged.
func (l *logRecords) has(level slog.Level, msg string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.recs {
		if r.Level == level && strings.Contains(r.Message, msg) {
			return true
		}
	}
	return false
}
