package zkcoord

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"
)

// Defaults applied by Config for fields left at their zero value.
const (
	DefaultSessionTimeout = 10 * time.Second
	DefaultLostAfter      = 2.0 / 3.0
	// DefaultMaxDataSize stays under ZooKeeper's default jute.maxbuffer
	// (1 MiB) with room for the request's path and header.
	DefaultMaxDataSize = 1<<20 - 1<<10
)

// minLostAfter is the shortest silence after which a Session may declare
// itself Lost: four heartbeats of the shortest interval, plus a round trip.
const minLostAfter = 100 * time.Millisecond

// Auth is one set of credentials added to the session, for example
// Auth{Scheme: "digest", Credential: "user:password"}.
type Auth struct {
	Scheme     string
	Credential string
}

// Config describes how to open a Session. The zero value of every field but
// Servers has a sensible default.
type Config struct {
	// Servers lists "host:port" addresses of the ensemble. Host names are
	// resolved again on every connection attempt.
	Servers []string
	// PinServers keeps Servers for the Session's whole life. By default
	// the Session follows the membership the ensemble publishes in
	// ConfigNode (ZooKeeper 3.5 and later): when the server it is
	// connected to is listed there, it takes the members' client
	// addresses as its servers, and takes them again whenever a
	// reconfiguration adds or removes servers (Session.Servers). Servers
	// reached through a load balancer or a proxy are never listed there,
	// so they stay as given; PinServers also keeps them when they are.
	PinServers bool
	// SessionTimeout is the timeout requested from the server, which may
	// negotiate it into [2, 20] ticks. Default 10s.
	SessionTimeout time.Duration
	// Chroot, if set, is prefixed to every path sent to the server and
	// stripped from every path received, including watch events. It is
	// created (persistent) by Connect if missing, unless ChrootMustExist.
	Chroot string
	// ChrootMustExist makes Connect fail with ErrNoNode, naming the
	// chroot, when Chroot does not exist, instead of creating it: for a
	// program that must not write unasked, or that would rather report a
	// mistyped chroot than fill a fresh one.
	ChrootMustExist bool
	// Auth is added to the session before Connect returns, and again on
	// every reconnect.
	Auth []Auth
	// SASL, if set, authenticates every connection with a SASL mechanism
	// (DigestMD5, or Kerberos from github.com/zkcoord/zkcoord/kerberos)
	// before any other request; see SASL.
	SASL SASL
	// ACL applies to every node created through the Session.
	// Default: world:anyone with all permissions.
	ACL []ACL
	// ACLFor, if set, chooses the ACL of each node the Session creates
	// from its path (relative to the chroot), as Curator's ACLProvider
	// does; a nil or empty answer means ACL. Ensured parents and the
	// chroot are asked for too.
	ACLFor func(path string) []ACL
	// TLS, if set, wraps every connection in TLS with this configuration.
	TLS *tls.Config
	// Dialer, if set, opens the TCP connections (before TLS).
	Dialer func(network, address string, timeout time.Duration) (net.Conn, error)
	// Logger receives the Session's logs. Default: silent.
	Logger *slog.Logger
	// LostAfter is the fraction of the negotiated session timeout without any
	// server response after which the Session declares itself Lost. It must
	// be in (0, 1); smaller is safer for owners and less tolerant of slow
	// networks. The Session asks for a reply after a quarter of that time
	// of quiet (or a sixth of the timeout, if shorter), so it must come to
	// at least 100ms of the requested timeout. Default 2/3.
	LostAfter float64
	// MaxDataSize bounds the data of a single node write. Default just under
	// 1 MiB, ZooKeeper's default limit.
	MaxDataSize int
}

func (c Config) withDefaults() (Config, error) {
	if len(c.Servers) == 0 {
		return c, fmt.Errorf("%w: no servers", ErrInvalidConfig)
	}
	for _, s := range c.Servers {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return c, fmt.Errorf("%w: server %q: want host:port", ErrInvalidConfig, s)
		}
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.SessionTimeout < 100*time.Millisecond || c.SessionTimeout > 24*time.Hour {
		return c, fmt.Errorf("%w: session timeout %v out of range", ErrInvalidConfig, c.SessionTimeout)
	}
	if c.LostAfter == 0 {
		c.LostAfter = DefaultLostAfter
	}
	if !(c.LostAfter > 0 && c.LostAfter < 1) {
		return c, fmt.Errorf("%w: LostAfter %v must be in (0, 1)", ErrInvalidConfig, c.LostAfter)
	}
	if lost := time.Duration(float64(c.SessionTimeout) * c.LostAfter); lost < minLostAfter {
		return c, fmt.Errorf("%w: LostAfter %v of a %v session timeout declares the session lost after %v of silence; "+
			"at least %v is needed to hear from a server in time", ErrInvalidConfig, c.LostAfter, c.SessionTimeout, lost, minLostAfter)
	}
	if c.Chroot != "" {
		c.Chroot = strings.TrimSuffix(c.Chroot, "/")
		if err := ValidatePath(c.Chroot); err != nil || c.Chroot == "" {
			return c, fmt.Errorf("%w: chroot %q: must be an absolute path other than /", ErrInvalidConfig, c.Chroot)
		}
	}
	for _, a := range c.Auth {
		if a.Scheme == "" {
			return c, fmt.Errorf("%w: auth with empty scheme", ErrInvalidConfig)
		}
		if a.Scheme == "digest" && !strings.Contains(a.Credential, ":") {
			return c, fmt.Errorf("%w: digest credential must be user:password", ErrInvalidConfig)
		}
	}
	if d, ok := c.SASL.(DigestMD5); ok && d.User == "" {
		return c, fmt.Errorf("%w: SASL DIGEST-MD5 without a user", ErrInvalidConfig)
	}
	if len(c.ACL) == 0 {
		c.ACL = WorldACL(PermAll)
	}
	if c.MaxDataSize == 0 {
		c.MaxDataSize = DefaultMaxDataSize
	}
	if c.MaxDataSize < 0 {
		return c, fmt.Errorf("%w: negative MaxDataSize", ErrInvalidConfig)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
