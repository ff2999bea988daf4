// Package event is the line format in which processes under test report
// what they do to a harness (package oracle checks the histories): one
// JSON object per line after a fixed prefix, stamped with a clock that the
// processes of one machine share. It is apart from the checkers so that a
// program that only reports (zkcoord rebalance --events) links nothing
// else.
package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Kind says what an [Event] records.
type Kind string

// Event kinds.
const (
	// Acquire: the client started using Resource (its barrier exists).
	// Token is the fencing token it will use, if known.
	Acquire Kind = "acquire"
	// Release: the client stopped using Resource (its barrier still exists).
	Release Kind = "release"
	// Use: one access to Resource, accepted, with fencing token Token.
	Use Kind = "use"
	// Reject: one access to Resource refused because Token was stale.
	Reject Kind = "reject"
	// Crash: the client's process is gone (killed, or exited without
	// releasing). Every resource the client held stops being held at At.
	Crash Kind = "crash"
	// Exit: the client's process exited on its own; like Crash, it ends
	// every holding still open.
	Exit Kind = "exit"
	// Pause and Resume: the client's process was stopped (SIGSTOP) and
	// continued (SIGCONT). A paused process still holds its resources.
	Pause  Kind = "pause"
	Resume Kind = "resume"
	// Fault: a marker for an injected fault; Detail describes it.
	Fault Kind = "fault"
	// Quiet: a marker saying that faults have stopped and the group should
	// now converge.
	Quiet Kind = "quiet"
	// Note: any other marker worth keeping in the history.
	Note Kind = "note"
	// Invalid: an event line that could not be parsed (Detail holds it). The
	// checkers report it, since a lost release could hide or fake an overlap.
	Invalid Kind = "invalid"
)

// Event is one thing that happened.
type Event struct {
	At       int64  `json:"at"` // ns, CLOCK_MONOTONIC ([Now])
	Client   string `json:"client"`
	Kind     Kind   `json:"kind"`
	Resource string `json:"resource,omitempty"`
	Token    int64  `json:"token,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

func (e Event) String() string {
	s := fmt.Sprintf("%d %s %s", e.At, e.Client, e.Kind)
	if e.Resource != "" {
		s += " " + e.Resource
	}
	if e.Token != 0 {
		s += fmt.Sprintf(" token=%d", e.Token)
	}
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// LinePrefix starts every event line.
const LinePrefix = "@oracle "

var (
	// ErrNotEvent is returned by [ParseLine] for a line that is not an event.
	ErrNotEvent = errors.New("oracle: not an event line")
	// ErrBadLine is wrapped by [ParseLine] for an event line it cannot read.
	ErrBadLine = errors.New("oracle: malformed event line")
)

// Line returns e as one event line, without a newline.
func (e Event) Line() string {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err) // cannot happen: only strings and integers
	}
	return LinePrefix + string(b)
}

// ParseLine reads a line written by [Event.Line] (a trailing newline is
// allowed). It fails with [ErrNotEvent] for other lines and with an error
// wrapping [ErrBadLine] for event lines it cannot read.
func ParseLine(line string) (Event, error) {
	line = strings.TrimRight(line, "\r\n")
	rest, ok := strings.CutPrefix(line, LinePrefix)
	if !ok {
		return Event{}, ErrNotEvent
	}
	var e Event
	dec := json.NewDecoder(strings.NewReader(rest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Event{}, fmt.Errorf("%w: %v: %q", ErrBadLine, err, line)
	}
	if dec.More() {
		return Event{}, fmt.Errorf("%w: trailing data: %q", ErrBadLine, line)
	}
	if e.Kind == "" {
		return Event{}, fmt.Errorf("%w: no kind: %q", ErrBadLine, line)
	}
	return e, nil
}

// Emitter writes events as lines, for a client process reporting on its
// standard output. It stamps each event with [Now] (unless At is set) and
// with its client name (unless Client is set), and writes each line with a
// single Write so that concurrent emitters of one process never interleave.
type Emitter struct {
	mu     sync.Mutex
	w      io.Writer
	client string
}

// NewEmitter returns an Emitter writing to w for client (which may be empty
// if the harness names the process).
func NewEmitter(w io.Writer, client string) *Emitter {
	return &Emitter{w: w, client: client}
}

// Emit stamps and writes e. The time is taken under the lock, so lines are
// written in time order.
func (em *Emitter) Emit(e Event) error {
	em.mu.Lock()
	defer em.mu.Unlock()
	if e.At == 0 {
		e.At = Now()
	}
	if e.Client == "" {
		e.Client = em.client
	}
	_, err := io.WriteString(em.w, e.Line()+"\n")
	return err
}

// WriteLine writes line, which is not an event, ordered with the events:
// every event stamped before the call is written before it. A process
// answering a harness's request with WriteLine thus tells the harness that
// all of its events stamped before the request have been delivered (see
// oracle.History.Before).
func (em *Emitter) WriteLine(line string) error {
	em.mu.Lock()
	defer em.mu.Unlock()
	_, err := io.WriteString(em.w, strings.TrimRight(line, "\n")+"\n")
	return err
}
