//go:build bench

package bench

import (
	"fmt"
	"strings"
)

// queueWhat says how the queue workloads are measured.
const queueWhat = "Consumers, each with a session of its own, take items from a queue filled to the depth " +
	"(with transactions of a thousand creates, before the suite and again before every step): until half " +
	"the depth (at most 20,000) is taken or the window (%v) is over. zkcoord's Queue takes one item per Take, " +
	"its Queue TakeN up to 100 per call (at most a consumer's share of the step's items); its WorkQueue " +
	"claims (Take, then Ack), its WorkQueue TakeN claims as many at once and acknowledges each; Kazoo's Queue gets, Kazoo's LockingQueue gets and consumes; " +
	"Curator's DistributedQueue (no lock path: at most once) runs one queue per consumer and counts the " +
	"messages its consumers receive; zkcoord's CuratorQueue takes from the same layout, deleting as Curator does, " +
	"or with a lock path locking each item first (lock, read, then delete item and lock in one transaction). " +
	"zkcoord's WorkQueue, Kazoo's LockingQueue and Kazoo's Queue share " +
	"one queue in the LockingQueue layout (Kazoo's Queue takes from its entries node); zkcoord's CuratorQueue and " +
	"Curator's DistributedQueue share one in Curator's layout; zkcoord's Queue has its own. Every queue object is made afresh for each step, so each step pays for its " +
	"first listing. Requests per item are the server's packets per item taken."

func isQueueMetric(id string) bool { return strings.HasPrefix(id, "queue-") }

// queueDefs lists the queue metrics.
func queueDefs(quick bool) []metricDef {
	sz := queueSizesFor(quick)
	var defs []metricDef
	for _, d := range sz.depths {
		for _, c := range sz.consumers {
			defs = append(defs, metricDef{id: queueMetric(d, c), unit: "ms per item", extras: []string{"items_per_s"},
				title: fmt.Sprintf("Queue %d deep, %d consumers", d, c), what: fmt.Sprintf(queueWhat, sz.window)})
		}
	}
	return defs
}

// renderQueues writes the queue table: items per second and requests per
// item for every depth and number of consumers.
func renderQueues(b *strings.Builder, rep *report) {
	sz := queueSizesFor(rep.Quick)
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	var rows []string
	for _, d := range sz.depths {
		for _, name := range implOrder() {
			var rate, req []string
			found := false
			for _, c := range sz.consumers {
				s := rep.metric(queueMetric(d, c)).impl(name)
				if s == nil {
					rate, req = append(rate, "–"), append(req, "–")
					continue
				}
				found = true
				rate = append(rate, num(s.Extra["items_per_s"]))
				req = append(req, num(s.PerOp.Packets))
			}
			if !found {
				continue
			}
			if isZkcoord(name) {
				name = "**" + name + "**"
			}
			rows = append(rows, fmt.Sprintf("| %s | %d | %s | %s |", name, d, strings.Join(rate, " | "), strings.Join(req, " | ")))
		}
	}
	if len(rows) == 0 {
		return
	}
	w("## Queues, loopback\n\n")
	w(queueWhat+"\n\n", sz.window)
	w("Items per second are the median over the steps; requests per item too.\n\n")
	w("| implementation | depth |")
	for _, c := range sz.consumers {
		w(" items/s, %d consumer%s |", c, plural(c))
	}
	for _, c := range sz.consumers {
		w(" requests/item, %d |", c)
	}
	w("\n|---|---|%s\n", strings.Repeat("---|", 2*len(sz.consumers)))
	for _, r := range rows {
		w("%s\n", r)
	}
	w("\n")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
