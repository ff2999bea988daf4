package config

import "github.com/zkcoord/zkcoord"

// Option configures a configuration node; every constructor takes it.
type Option func(*options)

type options struct {
	events chan<- zkcoord.RecoveryEvent
}

// WithRecoveryEvents sends every zkcoord.RecoveryEvent of a watcher
// started with WatchConfig or WatchJSONConfig (session started, session
// ended with its cause, recovering, recovered) to ch; its owner is the
// watcher, until it has ended.
// Delivery follows “Event channels” in the [zkcoord] package documentation:
// in order, none dropped while the owner lives, the channel never closed.
// New and NewJSON reject it: a Node lives on one Session.
func WithRecoveryEvents(ch chan<- zkcoord.RecoveryEvent) Option {
	return func(o *options) { o.events = ch }
}

// supervise returns the options of zkcoord.Supervise.
func (o options) supervise() []zkcoord.SuperviseOption {
	if o.events == nil {
		return nil
	}
	return []zkcoord.SuperviseOption{zkcoord.WithRecoveryEvents(o.events)}
}
