// Package metrics is the small interface through which zkcoord programs report
// what they measure: the state of the ZooKeeper session, leadership, locks
// held, resources assigned and rebalancings. It has no dependencies beyond
// the standard library and package zkcoord; an adapter such as metrics/prom
// turns the reports into a monitoring system's metrics.
//
// A Recorder is told about changes as they happen. Every method must be safe
// for concurrent use and must return quickly: it is called from the state
// machines being measured.
package metrics
