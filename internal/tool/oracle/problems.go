package oracle

import (
	"fmt"
	"slices"
	"sync"
)

// Problems are what makes a run's verdict FAIL besides violations of the
// invariants (a client that would not start, a fault that could not be
// injected): a harness records them as they happen. The zero value is
// ready; it is safe for concurrent use.
type Problems struct {
	mu   sync.Mutex
	list []string
}

// Addf records a problem and returns its text.
func (p *Problems) Addf(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, msg)
	return msg
}

// List returns the problems recorded so far, oldest first.
func (p *Problems) List() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.list)
}
