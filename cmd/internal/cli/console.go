package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
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
	c, err := console.New(sess, opts)
	if errors.Is(err, console.ErrInvalid) {
		return Usagef("ui: %v", err)
	}
	if err != nil {
		return err
	}
	// No WriteTimeout: the event streams stay open for as long as a page
	// is.
	srv := &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	addr := ln.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() {
		fmt.Fprintf(warn, "zkcoord: warning: the console listens on %s, beyond this machine, and has no authentication\n", addr)
	}
	announce(c.AdminURL(consoleURL(addr)))
	var serr error
	select {
	case <-ctx.Done():
	case <-sess.Done():
		serr = fmt.Errorf("the ZooKeeper session ended: %w", sess.Err())
	case err := <-served:
		serr = fmt.Errorf("serving the console: %w", err)
	}
	c.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("stopping the console's server", "err", err)
	}
	return serr
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
