package chaos

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/event"
)

func note(at int64, c, detail, inc string) event.Event {
	return event.Event{At: at, Client: c, Kind: event.Note, Detail: detail, Resource: inc}
}

func serve(at int64, c string, since int64, incs ...string) event.Event {
	d := fmt.Sprint(noteServe, since)
	for _, i := range incs {
		d += " " + i
	}
	return note(at, c, d, "")
}

// The discovery checker against short histories: c1 registers and
// replaces its instance, c2's provider reports (allowance 4s).
func TestCheckDiscovery(t *testing.T) {
	const s = int64(time.Second)
	up := func(at int64, c string) event.Event { return note(at, c, noteState+"Connected", "") }
	registered := []event.Event{
		up(0, "c1"), up(0, "c2"),
		note(1*s, "c1", noteReg, "a"), note(1*s+1, "c1", noteRegistered, "a"),
	}
	replaced := append(slices.Clone(registered),
		note(2*s, "c1", noteUnreg, "a"), note(2*s+1, "c1", noteUnregistered, "a"),
		note(2*s+2, "c1", noteReg, "b"), note(2*s+3, "c1", noteRegistered, "b"))
	tests := []struct {
		name   string
		events []event.Event
		want   []string // violation kinds
	}{
		{"served while registered", append(slices.Clone(registered), serve(2*s, "c2", 0, "a"), serve(9*s, "c2", 0, "a")), nil},
		{"not served yet, within the allowance", append(slices.Clone(registered), serve(4*s, "c2", 0)), nil},
		{"missing past the allowance", append(slices.Clone(registered), serve(6*s, "c2", 0)), []string{"missing"}},
		{"missing, but the provider reconnected lately", append(slices.Clone(registered), serve(6*s, "c2", 5*s)), nil},
		{"missing, but the provider was paused", append(slices.Clone(registered),
			event.Event{At: 2 * s, Client: "c2", Kind: event.Pause}, event.Event{At: 5 * s, Client: "c2", Kind: event.Resume},
			serve(6*s, "c2", 0)), nil},
		{"missing after its registrar was suspended", append(slices.Clone(registered),
			note(2*s, "c1", noteState+"Suspended", ""), serve(9*s, "c2", 0)), nil},
		{"gone, served within the allowance", append(slices.Clone(replaced), serve(5*s, "c2", 0, "a")), nil},
		{"gone, served past the allowance", append(slices.Clone(replaced), serve(7*s, "c2", 0, "a", "b")), []string{"stale"}},
		{"never registered", append(slices.Clone(registered), serve(2*s, "c2", 0, "a", "zz")), []string{"unregistered"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, vs := checkDiscovery(tc.events, 4*time.Second)
			var got []string
			for _, v := range vs {
				got = append(got, v.Kind)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("violations %v, want %v", vs, tc.want)
			}
		})
	}
}
