package main

import (
	"context"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/metrics"
)

// connect opens a Session as the connection flags say (see cli.Connect).
func (a *app) connect(ctx context.Context) (*zkcoord.Session, error) {
	cfg, err := a.Conn.Config()
	if err != nil {
		return nil, err
	}
	return a.ConnectConfig(ctx, cfg)
}

// opContext bounds a one-shot operation by the connect timeout plus the
// session timeout, so that a command never hangs on an unreachable ensemble.
func (a *app) opContext(sess *zkcoord.Session) (context.Context, context.CancelFunc) {
	return context.WithTimeout(a.Ctx, a.Conn.ConnectTimeout+sess.Timeout())
}

// open applies the common flags (logging, metrics) and connects: how every
// command that talks to ZooKeeper starts.
func (a *app) open() (*zkcoord.Session, error) {
	if err := a.Setup(); err != nil {
		return nil, err
	}
	return a.connect(a.Ctx)
}

// oneShot sets up logging and metrics and connects, for a command that
// makes a few requests: it returns the Session, a context bounding the
// requests (see opContext) and a function that ends both.
func (a *app) oneShot() (*zkcoord.Session, context.Context, func(), error) {
	sess, err := a.open()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := a.opContext(sess)
	return sess, ctx, func() { cancel(); cli.CloseSession(sess) }, nil
}

// supervise runs work on one Session after another until ctx ends or work
// is done, as cli.Supervise does: after a Session is Lost or Expired, work
// starts again on a new one. Each Session's state changes are logged, as
// watchSession does.
func (a *app) supervise(ctx context.Context, work func(ctx context.Context, sess *zkcoord.Session) error,
	opts ...zkcoord.SuperviseOption) error {
	cfg, err := a.Conn.Config()
	if err != nil {
		return err
	}
	return cli.Supervise(ctx, cfg, a.Conn.ConnectTimeout, a.Log, func(ctx context.Context, sess *zkcoord.Session) error {
		go watchSession(a, sess)
		return work(ctx, sess)
	}, opts...)
}

// watchSession logs the state changes of a long-lived Session that matter
// to an operator, and reports every state to the metrics, until the Session
// ends.
func watchSession(a *app, sess *zkcoord.Session) {
	_, noMetrics := a.Rec.(metrics.Nop)
	for ch := range sess.Watch(a.Ctx) {
		if !noMetrics {
			a.Rec.SessionState(ch.State)
		}
		id := fmt.Sprintf("0x%x", sess.ID())
		switch ch.State {
		case zkcoord.Suspended:
			a.Log.Warn("lost contact with ZooKeeper; what this process holds is still valid for now", "session", id)
		case zkcoord.Reconnected:
			a.Log.Info("in contact with ZooKeeper again", "session", id, "server", ch.Server)
		case zkcoord.Lost, zkcoord.Expired:
			a.Log.Error("ZooKeeper session ended", "session", id, "state", ch.State.String(), "err", ch.Err)
		}
	}
}
