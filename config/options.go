package config

import "github.com/zkcoord/zkcoord"

// Option configures a configuration node; every constructor takes it.
type Option func(*options)

type options struct {
	events func(zkcoord.RecoveryEvent)
}

// WithRecoveryEvents calls f with every zkcoord.RecoveryEvent of a watcher
// started with WatchConfig or WatchJSONConfig (session started, session
// ended with its cause, recovering, recovered), in order, on a goroutine
// of its own, so that a slow f never delays a recovery. New and NewJSON
// reject it: a Node lives on one Session.
func WithRecoveryEvents(f func(zkcoord.RecoveryEvent)) Option {
	return func(o *options) { o.events = f }
}

// supervise returns the options of zkcoord.Supervise.
func (o options) supervise() []zkcoord.SuperviseOption {
	if o.events == nil {
		return nil
	}
	return []zkcoord.SuperviseOption{zkcoord.WithRecoveryEvents(o.events)}
}
