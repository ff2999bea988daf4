package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
	"github.com/zkcoord/zkcoord/queue"
)

// The queue workload (see client_queue.go for the consumers' events): the
// harness is the producer, putting a numbered item every produceEvery
// while faults run, from a Session of its own that no fault targets
// (ZooKeeper server faults aside, which it recovers from through
// zkcoord.Supervise).

// produceEvery is the producer's pace, and queueDepth the most items it
// lets wait unacknowledged: the consumers always have work, whatever their
// number, and a backlog never grows beyond what they clear in a few
// seconds, so that the time to converge measures recovery, not a queue.
const (
	produceEvery = 100 * time.Millisecond
	queueDepth   = 20
)

// producerName is the producer's name in the history.
const producerName = "producer"

// startProducer starts putting items; the returned function stops it and
// waits until it has.
func (h *harness) startProducer() (stop func()) {
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan struct{})
	cfg := zkcoord.Config{Servers: h.zk.Servers(), SessionTimeout: 20 * time.Second}
	n := 0
	go func() {
		defer close(done)
		err := zkcoord.Supervise(ctx, cfg, func(ctx context.Context, sess *zkcoord.Session) error {
			q, err := queue.NewWork(sess, queuePath(h.root))
			if err != nil {
				return err
			}
			t := time.NewTicker(produceEvery)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-t.C:
				}
				if h.queue.outstanding() >= queueDepth {
					continue
				}
				n++
				item := itemName(n)
				at := event.Now()
				err := q.Put(ctx, []byte(item), queue.DefaultWorkPriority)
				detail := notePut
				if err != nil {
					// Lost with the connection, or cut short: it may or
					// may not be in the queue.
					detail = notePutUnknown
				}
				h.record(event.Event{At: at, Kind: event.Note, Client: producerName, Resource: item, Detail: detail})
				if err != nil && ctx.Err() == nil && sess.Err() == nil && !errors.Is(err, queue.ErrOutcomeUnknown) {
					return err
				}
			}
		})
		if err != nil && ctx.Err() == nil {
			h.problem("the producer stopped: %v", err)
		}
	}()
	h.queue.setProducing(true)
	return func() {
		cancel()
		<-done
		h.queue.setProducing(false)
		h.logf("producer stopped after %d items", n)
	}
}

// queueTracker follows the items while the run goes on, to decide when the
// consumers have caught up. It is safe for concurrent use.
type queueTracker struct {
	mu        sync.Mutex
	producing bool
	put       map[string]int64  // certain items: when put
	done      map[string]int64  // items acknowledged: when
	entry     map[string]string // item -> its entry's name (from the last claim)
	ackBy     map[string]string // item -> client acknowledging it, until acked or failed
	unsure    map[string]bool   // items whose acknowledgement failed or was cut short
}

func newQueueTracker() *queueTracker {
	return &queueTracker{put: map[string]int64{}, done: map[string]int64{}, entry: map[string]string{},
		ackBy: map[string]string{}, unsure: map[string]bool{}}
}

// outstanding returns the number of items put and not yet acknowledged.
func (t *queueTracker) outstanding() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for item := range t.put {
		if _, ok := t.done[item]; !ok {
			n++
		}
	}
	return n
}

func (t *queueTracker) setProducing(on bool) {
	t.mu.Lock()
	t.producing = on
	t.mu.Unlock()
}

func (t *queueTracker) observe(e event.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case e.Kind == event.Note && e.Client == producerName && e.Detail == notePut:
		t.put[e.Resource] = e.At
	case e.Kind == event.Acquire:
		t.entry[e.Resource] = e.Detail
	case e.Kind == event.Note && e.Detail == noteAck:
		t.ackBy[e.Resource] = e.Client
	case e.Kind == event.Note && e.Detail == noteAckFailed:
		delete(t.ackBy, e.Resource)
		t.unsure[e.Resource] = true
	case e.Kind == event.Note && (e.Detail == noteAcked || e.Detail == noteAckThrough):
		delete(t.ackBy, e.Resource)
		delete(t.unsure, e.Resource)
		if _, ok := t.done[e.Resource]; !ok {
			t.done[e.Resource] = e.At
		}
	case e.Kind == event.Crash:
		for item, c := range t.ackBy {
			if c == e.Client {
				delete(t.ackBy, item)
				t.unsure[item] = true
			}
		}
	}
}

// settled reports whether every item put by since has been acknowledged
// and, while the producer runs, every live consumer has taken an item
// since then; at is when the last of these happened. An item whose
// acknowledgement failed (or whose consumer died acknowledging it) counts
// as acknowledged once gone reports its entry gone from the queue: the
// acknowledgement went through, its reply was lost; the harness records
// that in the history.
func (h *harness) settleQueue(since int64) (ok bool, at int64, why string) {
	t := h.queue
	t.mu.Lock()
	at = since
	var pending, unsure []string
	entries := map[string]string{}
	for item, put := range t.put {
		if put > since {
			continue
		}
		if d, ok := t.done[item]; ok {
			at = max(at, d)
			continue
		}
		pending = append(pending, item)
		if t.unsure[item] {
			unsure = append(unsure, item)
			entries[item] = t.entry[item]
		}
	}
	producing := t.producing
	t.mu.Unlock()
	if len(pending) > len(unsure) {
		return h.queueWaiting(pending)
	}
	for _, item := range unsure {
		gone, err := h.entryGone(entries[item])
		if err != nil || !gone {
			return h.queueWaiting(pending)
		}
		h.record(event.Event{Kind: event.Note, Client: "harness", Resource: item, Detail: noteAckThrough})
	}
	if len(unsure) > 0 {
		return h.settleQueue(since)
	}
	if producing {
		var idle []string
		for _, c := range h.live() {
			if a, ok := h.track.firstAcquire(c, true, since); ok {
				at = max(at, a)
			} else {
				idle = append(idle, c)
			}
		}
		if len(idle) > 0 {
			return false, 0, "no item taken since the fault by " + strings.Join(idle, ", ")
		}
	}
	return true, at, ""
}

func (h *harness) queueWaiting(pending []string) (bool, int64, string) {
	slices.Sort(pending)
	if len(pending) > 5 {
		pending = append(pending[:5], "...")
	}
	return false, 0, "not acknowledged yet: " + strings.Join(pending, ", ")
}

// entryGone reports whether the queue entry named entry no longer exists.
func (h *harness) entryGone(entry string) (bool, error) {
	if entry == "" {
		return false, nil
	}
	var exists bool
	err := h.operate("look for "+entry, func(ctx context.Context, s *zkcoord.Session) error {
		var err error
		exists, _, err = s.Exists(ctx, zkcoord.Join(queuePath(h.root), "entries", entry))
		return err
	})
	return !exists, err
}

// checkQueueEmpty is the last part of the final state: nothing is left in
// the queue.
func (h *harness) checkQueueEmpty() error {
	var n int
	err := h.operate("count the queue", func(ctx context.Context, s *zkcoord.Session) error {
		q, err := queue.NewWork(s, queuePath(h.root))
		if err != nil {
			return err
		}
		n, err = q.Len(ctx)
		if errors.Is(err, zkcoord.ErrNoNode) {
			n, err = 0, nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if n != 0 {
		return fmt.Errorf("%d items left in the queue", n)
	}
	return nil
}

// QueueStats sum up a queue run.
type QueueStats struct {
	// Put items, and PutUnknown whose Put had an unknown outcome.
	Put        int `json:"put"`
	PutUnknown int `json:"put_unknown"`
	// Taken: claims; Processed: distinct items processed; Redelivered:
	// items taken more than once; Acked: successful acknowledgements.
	Taken       int `json:"taken"`
	Processed   int `json:"processed"`
	Redelivered int `json:"redelivered"`
	Acked       int `json:"acked"`
	// AckUnrecorded: items whose acknowledgement failed, or whose consumer
	// died acknowledging it, and whose entry the harness then found gone:
	// the acknowledgement went through, its reply was lost.
	AckUnrecorded int `json:"ack_unrecorded"`
}

// checkQueue runs the queue's checkers over the history: every item put is
// processed at least once and acknowledged exactly once (an item whose
// consumer died while acknowledging counts if it is gone from the queue,
// which the final state checks), an item is acknowledged only by a
// consumer that processed it first, and every item processed or
// acknowledged was put.
func checkQueue(events []event.Event) (QueueStats, []oracle.Violation) {
	var st QueueStats
	type item struct {
		put, maybe bool
		taken      int
		processed  map[string]bool // clients that finished processing it
		everDone   bool
		acked      []event.Event
		ackBegun   []event.Event
		through    bool // the harness found its entry gone after a failed ack
	}
	items := map[string]*item{}
	get := func(name string) *item {
		it := items[name]
		if it == nil {
			it = &item{processed: map[string]bool{}}
			items[name] = it
		}
		return it
	}
	var out []oracle.Violation
	for _, e := range events {
		if e.Resource == "" {
			continue
		}
		switch {
		case e.Kind == event.Note && e.Client == producerName:
			it := get(e.Resource)
			if e.Detail == notePut {
				it.put = true
				st.Put++
			} else {
				it.maybe = true
				st.PutUnknown++
			}
		case e.Kind == event.Acquire:
			get(e.Resource).taken++
			st.Taken++
		case e.Kind == event.Note && e.Detail == noteProcessed:
			it := get(e.Resource)
			it.processed[e.Client] = true
			it.everDone = true
		case e.Kind == event.Note && e.Detail == noteAck:
			it := get(e.Resource)
			it.ackBegun = append(it.ackBegun, e)
			if !it.processed[e.Client] {
				out = append(out, oracle.Violation{Kind: "ack before processed", Resource: e.Resource,
					ClientA: e.Client, At: e.At, Detail: "acknowledged an item it had not processed"})
			}
		case e.Kind == event.Note && e.Detail == noteAckThrough:
			get(e.Resource).through = true
		case e.Kind == event.Note && e.Detail == noteAcked:
			it := get(e.Resource)
			it.acked = append(it.acked, e)
			st.Acked++
			if len(it.acked) == 2 {
				out = append(out, oracle.Violation{Kind: "acked twice", Resource: e.Resource,
					ClientA: it.acked[0].Client, ClientB: e.Client, At: e.At,
					Detail: fmt.Sprintf("first acknowledged at %d", it.acked[0].At)})
			}
		}
	}
	names := slices.Sorted(maps.Keys(items))
	for _, n := range names {
		it := items[n]
		if it.everDone {
			st.Processed++
		}
		if it.taken > 1 {
			st.Redelivered++
		}
		switch {
		case !it.put && !it.maybe:
			out = append(out, oracle.Violation{Kind: "never put", Resource: n,
				Detail: "taken, processed or acknowledged but never put"})
		case !it.put:
			// Maybe put: nothing is owed.
		case !it.everDone:
			out = append(out, oracle.Violation{Kind: "lost", Resource: n, Detail: "put but never processed"})
		case len(it.acked) == 0 && !it.through:
			out = append(out, oracle.Violation{Kind: "lost", Resource: n, Detail: "processed but never acknowledged"})
		case len(it.acked) == 0:
			st.AckUnrecorded++
		}
	}
	return st, out
}
