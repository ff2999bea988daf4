package cli

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
	"github.com/zkcoord/zkcoord/metrics"
	"github.com/zkcoord/zkcoord/metrics/prom"
)

// Environment variables of the logging and metrics flags.
const (
	EnvLogLevel  = "ZKCOORD_LOG_LEVEL"
	envLogFormat = "ZKCOORD_LOG_FORMAT"
	envMetrics   = "ZKCOORD_METRICS"
)

// LogOptions are the logging and metrics flags.
type LogOptions struct {
	Level       string
	Format      string
	MetricsAddr string
}

// Register registers the logging and metrics flags on fs, with their
// defaults from the environment.
func (o *LogOptions) Register(fs *pflag.FlagSet) {
	fs.StringVar(&o.Level, "log-level", envOr(EnvLogLevel, "info"), "log `level`: debug, info, warn or error")
	fs.StringVar(&o.Format, "log-format", envOr(envLogFormat, "text"), "log `format`: text or json")
	fs.StringVar(&o.MetricsAddr, "metrics", os.Getenv(envMetrics), "serve Prometheus metrics at http://`addr`/metrics (like :9102)")
	grouped(fs, groupLog, map[string]string{"log-level": EnvLogLevel, "log-format": envLogFormat, "metrics": envMetrics})
}

// Logger builds the slog logger that writes to w (standard error).
func (o *LogOptions) Logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(o.Level)); err != nil {
		return nil, Usagef("--log-level: want debug, info, warn or error, not %q", o.Level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(o.Format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, Usagef("--log-format: want text or json, not %q", o.Format)
}

// ServeMetrics starts an HTTP server for Prometheus on addr and returns the
// recorder feeding it and a function that stops the server.
func ServeMetrics(addr string, log *slog.Logger) (metrics.Recorder, func(), error) {
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

// Start builds the logger writing to w and, with MetricsAddr, starts
// serving metrics there. It returns the logger, the recorder of the metrics
// (metrics.Nop without MetricsAddr) and a function that stops serving them.
func (o *LogOptions) Start(w io.Writer) (*slog.Logger, metrics.Recorder, func(), error) {
	log, err := o.Logger(w)
	if err != nil {
		return nil, nil, nil, err
	}
	if o.MetricsAddr == "" {
		return log, metrics.Nop{}, func() {}, nil
	}
	rec, stop, err := ServeMetrics(o.MetricsAddr, log)
	if err != nil {
		return nil, nil, nil, err
	}
	return log, rec, stop, nil
}
