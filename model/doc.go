// Package model holds Spin (Promela) models of zkcoord's protocols and the
// test that checks them: the election with terms and the leader node
// (election.pml), the Curator-layout mutex (lock.pml), the rebalancer in
// its three modes (rebalance.pml), the lock-delay of the rebalancer's
// barriers kept by handover marks (handover.pml) and the work queue's
// claims (queue.pml).
//
// TestModels builds a verifier for each configuration (spin -a, then the C
// compiler), runs it, and requires that the correct models verify and that
// every deliberately broken variant yields a counterexample trail. By
// default it runs the small configurations, which make test includes; the
// flag -model.full (make model) runs the large ones too. See README.md in
// this directory for the configurations, the properties and the state
// counts.
package model
