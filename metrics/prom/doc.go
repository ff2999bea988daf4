// Package prom is a metrics.Recorder that keeps Prometheus metrics:
//
//	zkcoord_session_state{state}                  1 for the current state of the session, 0 for the others
//	zkcoord_session_transitions_total{state}      session state transitions
//	zkcoord_leader{path}                          1 while this process leads the election (or coordinates the rebalance group) at path
//	zkcoord_lock_held{path}                       1 while this process holds the lock at path
//	zkcoord_assigned_resources{group}             resources of the group this process runs
//	zkcoord_rebalances_total{group}               completed rebalancings seen
//	zkcoord_rebalance_duration_seconds{group}     how long they took (histogram)
//	zkcoord_child_restarts_total{group}           supervised child processes started again
//
// Register it with a prometheus.Registerer and serve the registry with
// promhttp, or use Handler. A Recorder is safe for concurrent use.
package prom
