package chaos

import (
	"context"
	"slices"
	"time"

	"github.com/zkcoord/zkcoord/internal/fanout"
	"github.com/zkcoord/zkcoord/internal/tool/event"
)

// finish waits for the final state after the last fault, checks that it
// holds for Settle, then stops every client and the service.
func (h *harness) finish() FinalState {
	h.mark(event.Quiet, "harness", "faults over")
	quiet := event.Now()
	stable := h.o.Settle
	if !h.o.Workload.rebalance() {
		stable = 0
	}
	at, ok, why := h.converge(quiet, stable, h.o.ConvergeTimeout)
	if ok && !h.o.Workload.rebalance() {
		// Leaders and lock holders keep changing: check that they still
		// do after the settle time.
		h.sleep(h.o.Settle)
		_, ok, why = h.converge(event.Now(), 0, h.o.ConvergeTimeout)
	}
	if ok && h.queue != nil {
		if err := h.checkQueueEmpty(); err != nil {
			ok, why = false, err.Error()
		}
	}
	fs := h.finalState(quiet, at, ok, why, h.track.holdings())

	// Everyone leaves.
	var clients []*client
	for _, name := range h.live() {
		clients = append(clients, h.clients[name])
	}
	errs := make([]error, len(clients))
	fanout.Each(len(clients), len(clients), func(i int) { errs[i] = h.stopClient(clients[i]) })
	for _, err := range errs {
		if err != nil {
			h.problem("%v", err)
		}
	}
	h.stopService()
	return fs
}

// finalState is the state after the last fault, given what the last
// convergence check, begun at quiet, found (ok, and at when, or why not),
// and the holdings then; it logs whether the state was reached.
func (h *harness) finalState(quiet, at int64, ok bool, why string, holdings map[string][]string) FinalState {
	fs := FinalState{OK: ok && h.ctx.Err() == nil, Why: why}
	if h.ctx.Err() != nil {
		fs.Why = "interrupted"
	}
	if ok {
		fs.At = at
		fs.Converge = time.Duration(at - quiet)
	}
	fs.Holdings = holdings
	fs.Clients = h.live()
	fs.Resources = slices.Clone(h.resources)
	if fs.OK {
		h.logf("final state reached %v after the last fault and held for %v", fs.Converge.Round(time.Millisecond), h.o.Settle)
	} else {
		h.problem("final state not reached: %s", fs.Why)
	}
	return fs
}

// stopService closes the service's stdin and waits for it to stop.
func (h *harness) stopService() {
	h.service.CloseStdin()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.service.Wait(ctx); err != nil {
		h.problem("the service did not stop cleanly: %v", err)
	}
}

// FinalState is the group after the last fault and the settle time.
type FinalState struct {
	OK        bool                `json:"ok"`
	Why       string              `json:"why,omitempty"`
	At        int64               `json:"at,omitempty"`
	Converge  time.Duration       `json:"converge_ns,omitempty"`
	Clients   []string            `json:"clients"`
	Resources []string            `json:"resources"`
	Holdings  map[string][]string `json:"holdings"`
}
