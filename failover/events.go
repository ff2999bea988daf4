package failover

import (
	"context"
	"log/slog"
	"time"
)

// EventType names a transition of a Failover.
type EventType int

const (
	// EventStandby: competing for the lock.
	EventStandby EventType = iota + 1
	// EventFencing: the lock is won and a breadcrumb was found; the
	// fencing function runs against Event.Previous.
	EventFencing
	// EventFenced: the fencing function succeeded.
	EventFenced
	// EventFenceFailed: the fencing function failed (Event.Err); the lock
	// is given up and Run tries again after the retry delay.
	EventFenceFailed
	// EventActive: the breadcrumb is written; the active function starts.
	EventActive
	// EventInactive: the active function returned (Event.Err).
	EventInactive
	// EventStopped: Run returns (Event.Err).
	EventStopped
	// EventUnhealthy: the health check failed too often in a row; the
	// instance does not stand, or steps down if it was active.
	EventUnhealthy
	// EventHealthy: the health check passed again; the instance stands.
	EventHealthy
)

var eventNames = [...]string{"", "standby", "fencing", "fenced", "fence-failed", "active", "inactive", "stopped", "unhealthy", "healthy"}

func (t EventType) String() string {
	if t > 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return "unknown"
}

// Event is one transition of a Failover.
type Event struct {
	Type EventType
	At   time.Time
	// ID is this instance's participant id.
	ID string
	// Token is the fencing token of the current activation, from
	// EventFencing on.
	Token int64
	// Previous is the breadcrumb being fenced (EventFencing, EventFenced,
	// EventFenceFailed) or found (EventActive).
	Previous *Breadcrumb
	Err      error
}

func (f *Failover) emit(ev Event) {
	ev.At, ev.ID = time.Now(), f.opts.id
	f.feed.Push(ev)
	level := slog.LevelInfo
	attrs := []any{"path", f.path, "id", ev.ID}
	if ev.Token != 0 {
		attrs = append(attrs, "token", ev.Token)
	}
	if ev.Previous != nil {
		attrs = append(attrs, "previous", ev.Previous.ID, "previous_token", ev.Previous.Token)
	}
	if ev.Err != nil {
		attrs = append(attrs, "err", ev.Err)
		level = slog.LevelWarn
	}
	if ev.Type == EventStandby {
		level = slog.LevelDebug
	}
	f.opts.logger.Log(context.Background(), level, "failover "+ev.Type.String(), attrs...)
}
