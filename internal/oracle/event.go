package oracle

import (
	"io"

	"github.com/zkcoord/zkcoord/internal/event"
)

// The event-line format lives in package event, which a process that only
// reports events can link alone; these names keep the oracle's callers
// unchanged.
type (
	// Kind says what an Event records.
	Kind = event.Kind
	// Event is one thing that happened.
	Event = event.Event
	// Emitter writes events as lines.
	Emitter = event.Emitter
)

// Event kinds (see package event).
const (
	Acquire = event.Acquire
	Release = event.Release
	Use     = event.Use
	Reject  = event.Reject
	Crash   = event.Crash
	Exit    = event.Exit
	Pause   = event.Pause
	Resume  = event.Resume
	Fault   = event.Fault
	Quiet   = event.Quiet
	Note    = event.Note
	Invalid = event.Invalid
)

// LinePrefix starts every event line.
const LinePrefix = event.LinePrefix

var (
	// ErrNotEvent is returned by ParseLine for a line that is not an event.
	ErrNotEvent = event.ErrNotEvent
	// ErrBadLine is wrapped by ParseLine for an event line it cannot read.
	ErrBadLine = event.ErrBadLine
)

// ParseLine reads a line written by Event.Line.
func ParseLine(line string) (Event, error) { return event.ParseLine(line) }

// NewEmitter returns an Emitter writing to w for client.
func NewEmitter(w io.Writer, client string) *Emitter { return event.NewEmitter(w, client) }

// Now returns the time events are stamped with.
func Now() int64 { return event.Now() }
