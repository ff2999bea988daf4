package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/pflag"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/metrics"
	"github.com/zkcoord/zkcoord/metrics/prom"
)

const (
	envLogLevel  = "ZKCOORD_LOG_LEVEL"
	envLogFormat = "ZKCOORD_LOG_FORMAT"
	envMetrics   = "ZKCOORD_METRICS"
)

// logOptions are the logging and metrics flags.
type logOptions struct {
	level       string
	format      string
	metricsAddr string
}

func (o *logOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.level, "log-level", envOr(envLogLevel, "info"), "log `level`: debug, info, warn or error")
	fs.StringVar(&o.format, "log-format", envOr(envLogFormat, "text"), "log `format`: text or json")
	fs.StringVar(&o.metricsAddr, "metrics", os.Getenv(envMetrics), "serve Prometheus metrics at http://`addr`/metrics (like :9102)")
	grouped(fs, groupLog, map[string]string{"log-level": envLogLevel, "log-format": envLogFormat, "metrics": envMetrics})
}

// logger builds the slog logger that writes to w (standard error).
func (o *logOptions) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(o.level)); err != nil {
		return nil, usagef("--log-level: want debug, info, warn or error, not %q", o.level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(o.format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usagef("--log-format: want text or json, not %q", o.format)
}

// serveMetrics starts an HTTP server for Prometheus on addr and returns the
// recorder feeding it and a function that stops the server.
func serveMetrics(addr string, log *slog.Logger) (metrics.Recorder, func(), error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	rec, err := prom.New(reg)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", prom.Handler(reg))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	log.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return rec, stop, nil
}

// watchSession logs the state changes of a long-lived Session that matter
// to an operator, and reports every state to the metrics, until the Session
// ends.
func watchSession(a *app, sess *zkcoord.Session) {
	_, noMetrics := a.rec.(metrics.Nop)
	for ch := range sess.Watch(a.ctx) {
		if !noMetrics {
			a.rec.SessionState(ch.State)
		}
		id := fmt.Sprintf("0x%x", sess.ID())
		switch ch.State {
		case zkcoord.Suspended:
			a.log.Warn("lost contact with ZooKeeper; what this process holds is still valid for now", "session", id)
		case zkcoord.Reconnected:
			a.log.Info("in contact with ZooKeeper again", "session", id, "server", ch.Server)
		case zkcoord.Lost, zkcoord.Expired:
			a.log.Error("ZooKeeper session ended", "session", id, "state", ch.State.String(), "err", ch.Err)
		}
	}
}
