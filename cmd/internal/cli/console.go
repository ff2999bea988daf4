package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
)

// ServeConsole serves the console of sess on ln until ctx ends or the
// Session does. It gives the URL to announce (with the admin key, if
// admin actions are enabled) and, when ln is not on a
// loopback address, prints a warning on warn. The Session stays the caller's, to close
// after: the console is closed first (ending the event streams), then the
// server is shut down.
func ServeConsole(ctx context.Context, sess *zkcoord.Session, ln net.Listener, opts console.Options,
	announce func(url string), warn io.Writer, log *slog.Logger) error {
	c, err := NewConsole(sess, opts)
	if err != nil {
		return err
	}
	s := StartConsole(c, ln, announce, warn)
	defer s.Stop(log)
	select {
	case <-ctx.Done():
		return nil
	case <-sess.Done():
		return fmt.Errorf("the ZooKeeper session ended: %w", sess.Err())
	case <-s.Failed():
		return s.Err()
	}
}

// NewConsole is console.New with invalid options as a usage error.
func NewConsole(sess *zkcoord.Session, opts console.Options) (*console.Console, error) {
	c, err := console.New(sess, opts)
	if errors.Is(err, console.ErrInvalid) {
		return nil, Usagef("ui: %v", err)
	}
	return c, err
}

// ConsoleServer is a console served over HTTP.
type ConsoleServer struct {
	c      *console.Console
	srv    *http.Server
	failed chan struct{}
	err    error // why serving failed, once failed is closed
	once   sync.Once
}

// StartConsole serves c on ln. It gives the URL to announce (with the
// admin key, if admin actions are enabled) and, when ln is not on a
// loopback address, prints a warning on warn. Stop ends it.
func StartConsole(c *console.Console, ln net.Listener, announce func(url string), warn io.Writer) *ConsoleServer {
	// No WriteTimeout: the event streams stay open for as long as a page
	// is.
	s := &ConsoleServer{c: c, srv: &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second},
		failed: make(chan struct{})}
	go func() {
		s.err = fmt.Errorf("serving the console: %w", s.srv.Serve(ln))
		close(s.failed)
	}()
	addr := ln.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() {
		fmt.Fprintf(warn, "zkcoord: warning: the console listens on %s, beyond this machine, and has no authentication\n", addr)
	}
	announce(c.AdminURL(consoleURL(addr)))
	return s
}

// Console is the console served.
func (s *ConsoleServer) Console() *console.Console { return s.c }

// Failed is closed when serving has stopped: after Stop, or because it
// failed (Err says why).
func (s *ConsoleServer) Failed() <-chan struct{} { return s.failed }

// Err says why serving stopped, once Failed is closed.
func (s *ConsoleServer) Err() error {
	<-s.failed
	return s.err
}

// Stop closes the console, which ends the event streams, then shuts the
// server down. Later calls do nothing.
func (s *ConsoleServer) Stop(log *slog.Logger) {
	s.once.Do(func() {
		s.c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			log.Warn("stopping the console's server", "err", err)
		}
	})
}

// consoleURL is the address to open in a browser: a wildcard address is
// shown as the loopback one.
func consoleURL(addr *net.TCPAddr) string {
	host := addr.IP
	if host.IsUnspecified() {
		host = net.IPv4(127, 0, 0, 1)
	}
	return "http://" + net.JoinHostPort(host.String(), fmt.Sprint(addr.Port)) + "/"
}
