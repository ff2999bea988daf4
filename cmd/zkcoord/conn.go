package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/pflag"
	"github.com/zkcoord/zkcoord"
)

// Environment variables of the connection flags.
const (
	envServers        = "ZKCOORD_SERVERS"
	envChroot         = "ZKCOORD_CHROOT"
	envSessionTimeout = "ZKCOORD_SESSION_TIMEOUT"
	envAuth           = "ZKCOORD_AUTH"
	envACL            = "ZKCOORD_ACL"
	envTLS            = "ZKCOORD_TLS"
	envTLSCA          = "ZKCOORD_TLS_CA"
	envTLSCert        = "ZKCOORD_TLS_CERT"
	envTLSKey         = "ZKCOORD_TLS_KEY"
	envConnectTimeout = "ZKCOORD_CONNECT_TIMEOUT"
)

const (
	defaultServers        = "127.0.0.1:2181"
	defaultConnectTimeout = 15 * time.Second
)

// connOptions are the connection flags, with defaults from the environment.
type connOptions struct {
	servers        string
	chroot         string
	sessionTimeout time.Duration
	auth           string
	acl            string
	tls            bool
	tlsCA          string
	tlsCert        string
	tlsKey         string
	connectTimeout time.Duration

	envErrs []error // environment values that could not be parsed
}

func (o *connOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.servers, "zk", envOr(envServers, defaultServers), "comma-separated ZooKeeper `servers` (host:port)")
	fs.StringVar(&o.chroot, "chroot", os.Getenv(envChroot), "`path` prefixed to every path")
	fs.DurationVar(&o.sessionTimeout, "session-timeout", o.envDuration(envSessionTimeout, zkcoord.DefaultSessionTimeout),
		"session timeout asked of the server (a `duration`)")
	fs.StringVar(&o.auth, "auth", os.Getenv(envAuth), "digest credentials `user:password`")
	fs.StringVar(&o.acl, "acl", envOr(envACL, "open"), "`mode` of the nodes created: open (anyone may do anything) or creator (only the authenticated user)")
	fs.BoolVar(&o.tls, "tls", o.envBool(envTLS), "connect with TLS (implied by --tls-ca, --tls-cert)")
	fs.StringVar(&o.tlsCA, "tls-ca", os.Getenv(envTLSCA), "PEM `file` of the CA certificates that signed the servers' (default: the system's)")
	fs.StringVar(&o.tlsCert, "tls-cert", os.Getenv(envTLSCert), "PEM `file` of the client certificate")
	fs.StringVar(&o.tlsKey, "tls-key", os.Getenv(envTLSKey), "PEM `file` of the client key")
	fs.DurationVar(&o.connectTimeout, "connect-timeout", o.envDuration(envConnectTimeout, defaultConnectTimeout),
		"give up if no session is established within this `duration`")
	grouped(fs, groupConn, map[string]string{"zk": envServers, "chroot": envChroot, "session-timeout": envSessionTimeout,
		"auth": envAuth, "acl": envACL, "tls": envTLS, "tls-ca": envTLSCA, "tls-cert": envTLSCert, "tls-key": envTLSKey,
		"connect-timeout": envConnectTimeout})
}

// grouped marks the flags of a group, each with its environment variable.
func grouped(fs *pflag.FlagSet, group string, env map[string]string) {
	for name, v := range env {
		_ = fs.SetAnnotation(name, annotGroup, []string{group})
		_ = fs.SetAnnotation(name, annotEnv, []string{v})
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func (o *connOptions) envDuration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		o.envErrs = append(o.envErrs, fmt.Errorf("%s=%q: not a duration (like 10s)", name, v))
		return def
	}
	return d
}

func (o *connOptions) envBool(name string) bool {
	v := os.Getenv(name)
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		o.envErrs = append(o.envErrs, fmt.Errorf("%s=%q: want true or false", name, v))
	}
	return b
}

// config builds the Session configuration. Bad values are usage errors.
func (o *connOptions) config() (zkcoord.Config, error) {
	if len(o.envErrs) > 0 {
		return zkcoord.Config{}, &exitError{code: exitUsage, err: errors.Join(o.envErrs...)}
	}
	cfg := zkcoord.Config{SessionTimeout: o.sessionTimeout, Chroot: o.chroot}
	for _, s := range strings.Split(o.servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	if len(cfg.Servers) == 0 {
		return cfg, usagef("--zk: no servers given")
	}
	if o.chroot != "" {
		if err := zkcoord.ValidatePath(o.chroot); err != nil {
			return cfg, usagef("--chroot: %v", err)
		}
	}
	if o.sessionTimeout <= 0 {
		return cfg, usagef("--session-timeout must be positive")
	}
	if o.connectTimeout <= 0 {
		return cfg, usagef("--connect-timeout must be positive")
	}
	if o.auth != "" {
		if !strings.Contains(o.auth, ":") {
			return cfg, usagef("--auth: want user:password")
		}
		cfg.Auth = []zkcoord.Auth{{Scheme: "digest", Credential: o.auth}}
	}
	switch o.acl {
	case "open", "":
	case "creator":
		if o.auth == "" {
			return cfg, usagef("--acl creator needs --auth (the creator is the authenticated user)")
		}
		cfg.ACL = zk.AuthACL(zk.PermAll)
	default:
		return cfg, usagef("--acl: want open or creator, not %q", o.acl)
	}
	if o.tls || o.tlsCA != "" || o.tlsCert != "" || o.tlsKey != "" {
		tc, err := o.tlsConfig()
		if err != nil {
			return cfg, err
		}
		cfg.TLS = tc
	}
	return cfg, nil
}

func (o *connOptions) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.tlsCA != "" {
		pem, err := os.ReadFile(o.tlsCA)
		if err != nil {
			return nil, usagef("--tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--tls-ca: no PEM certificate in %s", o.tlsCA)
		}
		tc.RootCAs = pool
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return nil, usagef("--tls-cert and --tls-key go together")
	}
	if o.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return nil, usagef("--tls-cert/--tls-key: %v", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// connect opens a Session, waiting at most the connect timeout, and turns
// the usual failures into messages an operator can act on.
func (a *app) connect(ctx context.Context) (*zkcoord.Session, error) {
	cfg, err := a.conn.config()
	if err != nil {
		return nil, err
	}
	return a.connectConfig(ctx, cfg)
}

func (a *app) connectConfig(ctx context.Context, cfg zkcoord.Config) (*zkcoord.Session, error) {
	if a.log.Enabled(ctx, slog.LevelDebug) {
		cfg.Logger = a.log // the Session's own logs; watchSession reports what matters otherwise
	}
	errTimeout := errors.New("connect timeout")
	cctx, cancel := context.WithTimeoutCause(ctx, a.conn.connectTimeout, errTimeout)
	defer cancel()
	sess, err := zkcoord.Connect(cctx, cfg)
	switch {
	case err == nil:
		a.log.Debug("connected", "server", sess.Server(), "session", fmt.Sprintf("0x%x", sess.ID()),
			"timeout", sess.Timeout())
		return sess, nil
	case errors.Is(context.Cause(cctx), errTimeout):
		return nil, fmt.Errorf("cannot reach ZooKeeper at %s within %v: are the servers running and reachable? (set them with --zk or %s)",
			strings.Join(cfg.Servers, ","), a.conn.connectTimeout, envServers)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, zkcoord.ErrAuthFailed):
		return nil, fmt.Errorf("ZooKeeper rejected the credentials of --auth: %w", err)
	case errors.Is(err, zkcoord.ErrInvalidConfig):
		return nil, usagef("%v", err)
	case errors.Is(err, zkcoord.ErrNoAuth):
		return nil, fmt.Errorf("not allowed to create the chroot %s: %w", cfg.Chroot, err)
	}
	return nil, fmt.Errorf("connecting to %s: %w", strings.Join(cfg.Servers, ","), err)
}

// closeSession closes sess, waiting a bounded time.
func closeSession(sess *zkcoord.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout()+5*time.Second)
	defer cancel()
	_ = sess.Close(ctx)
}

// opContext bounds a one-shot operation by the connect timeout plus the
// session timeout, so that a command never hangs on an unreachable ensemble.
func (a *app) opContext(sess *zkcoord.Session) (context.Context, context.CancelFunc) {
	return context.WithTimeout(a.ctx, a.conn.connectTimeout+sess.Timeout())
}

// open applies the common flags (logging, metrics) and connects: how every
// command that talks to ZooKeeper starts.
func (a *app) open() (*zkcoord.Session, error) {
	if err := a.setup(); err != nil {
		return nil, err
	}
	return a.connect(a.ctx)
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
	return sess, ctx, func() { cancel(); closeSession(sess) }, nil
}
