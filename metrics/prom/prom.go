package prom

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/metrics"
)

// Namespace prefixes every metric name.
const Namespace = "zkcoord"

// states are the session states, in the order of zkcoord.State.
var states = []zkcoord.State{zkcoord.Connected, zkcoord.Suspended, zkcoord.Reconnected,
	zkcoord.Lost, zkcoord.Expired, zkcoord.Closed}

// Recorder keeps the metrics. Create it with New.
type Recorder struct {
	sessionState       *prometheus.GaugeVec
	sessionTransitions *prometheus.CounterVec
	leader             *prometheus.GaugeVec
	lockHeld           *prometheus.GaugeVec
	assigned           *prometheus.GaugeVec
	rebalances         *prometheus.CounterVec
	rebalanceDuration  *prometheus.HistogramVec
	childRestarts      *prometheus.CounterVec
}

var _ metrics.Recorder = (*Recorder)(nil)

// DurationBuckets are the buckets of zkcoord_rebalance_duration_seconds:
// from 10ms to about 82s.
var DurationBuckets = prometheus.ExponentialBuckets(0.01, 2, 14)

// New creates the metrics and registers them with reg (which may be nil to
// register nothing, for tests).
func New(reg prometheus.Registerer) (*Recorder, error) {
	r := &Recorder{
		sessionState: gaugeVec("session_state",
			"1 for the current state of the ZooKeeper session, 0 for the others.", "state"),
		sessionTransitions: counterVec("session_transitions_total",
			"ZooKeeper session state transitions, by new state.", "state"),
		leader:     gaugeVec("leader", "1 while this process leads the election at path.", "path"),
		lockHeld:   gaugeVec("lock_held", "1 while this process holds the lock at path.", "path"),
		assigned:   gaugeVec("assigned_resources", "Resources of the group this process runs.", "group"),
		rebalances: counterVec("rebalances_total", "Completed rebalancings of the group.", "group"),
		rebalanceDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace,
			Name: "rebalance_duration_seconds", Help: "Time from a change of the group until every resource is held by its allocated owner.",
			Buckets: DurationBuckets},
			[]string{"group"}),
		childRestarts: counterVec("child_restarts_total",
			"Supervised child processes started again after they ended.", "group"),
	}
	for _, s := range states {
		r.sessionState.WithLabelValues(stateLabel(s)).Set(0)
	}
	if reg != nil {
		for _, c := range r.collectors() {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// gaugeVec is a gauge of the namespace with one label.
func gaugeVec(name, help, label string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, []string{label})
}

// counterVec is a counter of the namespace with one label.
func counterVec(name, help, label string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, []string{label})
}

func (r *Recorder) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.sessionState, r.sessionTransitions, r.leader, r.lockHeld,
		r.assigned, r.rebalances, r.rebalanceDuration, r.childRestarts}
}

// stateLabel is the label value of a session state: its name in lower case.
func stateLabel(s zkcoord.State) string {
	switch s {
	case zkcoord.Connected:
		return "connected"
	case zkcoord.Suspended:
		return "suspended"
	case zkcoord.Reconnected:
		return "reconnected"
	case zkcoord.Lost:
		return "lost"
	case zkcoord.Expired:
		return "expired"
	case zkcoord.Closed:
		return "closed"
	}
	return "unknown"
}

// SessionState implements metrics.Recorder.
func (r *Recorder) SessionState(s zkcoord.State) {
	for _, o := range states {
		v := 0.0
		if o == s {
			v = 1
		}
		r.sessionState.WithLabelValues(stateLabel(o)).Set(v)
	}
	r.sessionTransitions.WithLabelValues(stateLabel(s)).Inc()
}

// Leading implements metrics.Recorder.
func (r *Recorder) Leading(path string, leading bool) {
	r.leader.WithLabelValues(path).Set(b2f(leading))
}

// LockHeld implements metrics.Recorder.
func (r *Recorder) LockHeld(path string, held bool) {
	r.lockHeld.WithLabelValues(path).Set(b2f(held))
}

// Assigned implements metrics.Recorder.
func (r *Recorder) Assigned(group string, n int) {
	r.assigned.WithLabelValues(group).Set(float64(n))
}

// Rebalanced implements metrics.Recorder.
func (r *Recorder) Rebalanced(group string, d time.Duration) {
	r.rebalances.WithLabelValues(group).Inc()
	r.rebalanceDuration.WithLabelValues(group).Observe(d.Seconds())
}

// ChildRestarted implements metrics.Recorder.
func (r *Recorder) ChildRestarted(group string) {
	r.childRestarts.WithLabelValues(group).Inc()
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Handler returns an HTTP handler serving the metrics of g in the Prometheus
// exposition format.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}
