package event

import "errors"

// Sink returns a function that reads the output lines of one process (for
// example the sink of launch.Start): event lines go to record, with client
// as their Client when they name none, lines that look like events but
// cannot be parsed go to record as [Invalid] events, and every other line
// goes to next (if not nil).
func Sink(client string, record func(Event), next func(line string)) func(line string) {
	return func(line string) {
		e, err := ParseLine(line)
		switch {
		case err == nil:
			if e.Client == "" {
				e.Client = client
			}
			record(e)
		case errors.Is(err, ErrNotEvent):
			if next != nil {
				next(line)
			}
		default:
			record(Event{Client: client, Kind: Invalid, Detail: line})
		}
	}
}
