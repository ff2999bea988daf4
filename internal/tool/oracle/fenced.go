package oracle

import (
	"errors"
	"fmt"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"sync"
)

// ErrFenced is wrapped by [Fenced.Use] when it refuses a stale token.
var ErrFenced = errors.New("oracle: stale fencing token")

// Fenced is a resource store that honours fencing tokens, as a real resource
// (a database, a queue) would: it refuses any use with a token older than the
// newest it has seen for that resource, and a use with the newest token by a
// different client. It records every decision in a History as a [Use] or
// [Reject] event, stamped while the decision is made, so the history orders
// uses as the store saw them.
type Fenced struct {
	h      *History
	mu     sync.Mutex
	newest map[string]fence
}

type fence struct {
	token  int64
	client string
}

// NewFenced returns a Fenced recording into h (which may be nil).
func NewFenced(h *History) *Fenced {
	return &Fenced{h: h, newest: map[string]fence{}}
}

// Use is one access to resource by client with token. It returns an error
// wrapping [ErrFenced] if the token is stale.
func (f *Fenced) Use(resource, client string, token int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, seen := f.newest[resource]
	var err error
	switch {
	case !seen || token > cur.token:
		f.newest[resource] = fence{token, client}
	case token == cur.token && client == cur.client:
	case token == cur.token:
		err = fmt.Errorf("%w: %q used %q with token %d, already used by %q", ErrFenced, client, resource, token, cur.client)
	default:
		err = fmt.Errorf("%w: %q used %q with token %d, newest is %d (%q)", ErrFenced, client, resource, token, cur.token, cur.client)
	}
	if f.h != nil {
		e := event.Event{At: event.Now(), Client: client, Kind: event.Use, Resource: resource, Token: token}
		if err != nil {
			e.Kind, e.Detail = event.Reject, err.Error()
		}
		f.h.Add(e)
	}
	return err
}

// Newest returns the newest token accepted for resource and its client.
func (f *Fenced) Newest(resource string) (token int64, client string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, ok := f.newest[resource]
	return cur.token, cur.client, ok
}
