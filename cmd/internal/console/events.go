package console

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"
)

// keepAlive is how often an idle event stream sends a comment, so that
// proxies keep it open and a closed browser is noticed.
const keepAlive = 15 * time.Second

// serveEvents streams server-sent events: "status" (a Status), "view" (a
// View), "gone" (the path of a recipe that disappeared) and "event" (a
// timeline Event). The first batch holds everything; later ones what
// changed.
func (c *Console) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := c.hub.subscribe()
	defer c.hub.unsubscribe(s)
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.stop:
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-s.notify:
			if err := writeBatch(w, c.hub.take(s, c.status)); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

func writeBatch(w http.ResponseWriter, b batch) error {
	send := func(event string, data []byte) error {
		_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		return err
	}
	if b.status != nil {
		raw, _ := json.Marshal(b.status)
		if err := send("status", raw); err != nil {
			return err
		}
	}
	paths := slices.Sorted(maps.Keys(b.views))
	for _, p := range paths {
		var err error
		if raw := b.views[p]; raw != nil {
			err = send("view", raw)
		} else {
			quoted, _ := json.Marshal(p)
			err = send("gone", quoted)
		}
		if err != nil {
			return err
		}
	}
	for _, e := range b.events {
		raw, _ := json.Marshal(e)
		if err := send("event", raw); err != nil {
			return err
		}
	}
	return nil
}
