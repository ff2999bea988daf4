package cli

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

	"github.com/spf13/pflag"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/kerberos"
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
	envSASLUser       = "ZKCOORD_SASL_USER"
	envSASLPassword   = "ZKCOORD_SASL_PASSWORD"
	envSASLPassFile   = "ZKCOORD_SASL_PASSWORD_FILE"
	envKrbPrincipal   = "ZKCOORD_KERBEROS_PRINCIPAL"
	envKrbKeytab      = "ZKCOORD_KERBEROS_KEYTAB"
	envKrbConfig      = "ZKCOORD_KERBEROS_CONFIG"
	envKrbService     = "ZKCOORD_KERBEROS_SERVICE"
	envKrbServer      = "ZKCOORD_KERBEROS_SERVER_PRINCIPAL"
	envPinServers     = "ZKCOORD_PIN_SERVERS"
)

const (
	defaultServers        = "127.0.0.1:2181"
	defaultConnectTimeout = 15 * time.Second
)

// ConnOptions are the connection flags, with defaults from the environment
// (Register).
type ConnOptions struct {
	Servers        string
	Chroot         string
	SessionTimeout time.Duration
	Auth           string
	ACL            string
	TLS            bool
	TLSCA          string
	TLSCert        string
	TLSKey         string
	ConnectTimeout time.Duration
	// SASL DIGEST-MD5: a user and its password, or a file holding it.
	SASLUser         string
	SASLPassword     string
	SASLPasswordFile string
	// SASL GSSAPI (Kerberos): a principal, its keytab, krb5.conf, the
	// servers' service name or their whole principal.
	KerberosPrincipal       string
	KerberosKeytab          string
	KerberosConfig          string
	KerberosService         string
	KerberosServerPrincipal string
	// PinServers keeps --zk's servers, instead of following the
	// membership the ensemble publishes (zkcoord.Config.PinServers).
	PinServers bool

	envErrs []error // environment values that could not be parsed
}

// Register registers the connection flags on fs, with their defaults from
// the environment.
func (o *ConnOptions) Register(fs *pflag.FlagSet) {
	fs.StringVar(&o.Servers, "zk", envOr(envServers, defaultServers), "comma-separated ZooKeeper `servers` (host:port), optionally followed by a chroot path (host:2181/app)")
	fs.StringVar(&o.Chroot, "chroot", os.Getenv(envChroot), "`path` prefixed to every path; it must exist (create --parents creates it)")
	fs.DurationVar(&o.SessionTimeout, "session-timeout", o.envDuration(envSessionTimeout, zkcoord.DefaultSessionTimeout),
		"session timeout asked of the server (a `duration`)")
	fs.StringVar(&o.Auth, "auth", os.Getenv(envAuth), "digest credentials `user:password`")
	fs.StringVar(&o.ACL, "acl", envOr(envACL, "open"), "`mode` of the nodes created: open (anyone may do anything) or creator (only the authenticated user)")
	fs.BoolVar(&o.TLS, "tls", o.envBool(envTLS), "connect with TLS (implied by --tls-ca, --tls-cert)")
	fs.StringVar(&o.TLSCA, "tls-ca", os.Getenv(envTLSCA), "PEM `file` of the CA certificates that signed the servers' (default: the system's)")
	fs.StringVar(&o.TLSCert, "tls-cert", os.Getenv(envTLSCert), "PEM `file` of the client certificate")
	fs.StringVar(&o.TLSKey, "tls-key", os.Getenv(envTLSKey), "PEM `file` of the client key")
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", o.envDuration(envConnectTimeout, defaultConnectTimeout),
		"give up if no session is established within this `duration`")
	fs.StringVar(&o.SASLUser, "sasl-user", os.Getenv(envSASLUser), "SASL DIGEST-MD5 `user` (a user_<name> of the servers' JAAS Server section)")
	fs.StringVar(&o.SASLPassword, "sasl-password", os.Getenv(envSASLPassword), "`password` of --sasl-user")
	fs.StringVar(&o.SASLPasswordFile, "sasl-password-file", os.Getenv(envSASLPassFile), "`file` holding the password of --sasl-user")
	fs.StringVar(&o.KerberosPrincipal, "kerberos-principal", os.Getenv(envKrbPrincipal), "authenticate with Kerberos (SASL GSSAPI) as this `principal` (name or name@REALM)")
	fs.StringVar(&o.KerberosKeytab, "kerberos-keytab", os.Getenv(envKrbKeytab), "keytab `file` of --kerberos-principal")
	fs.StringVar(&o.KerberosConfig, "kerberos-config", os.Getenv(envKrbConfig), "krb5.conf `file` (default: $KRB5_CONFIG, else /etc/krb5.conf)")
	fs.StringVar(&o.KerberosService, "kerberos-service", envOr(envKrbService, kerberos.DefaultService), "service `name` of the servers' principals (service/host)")
	fs.StringVar(&o.KerberosServerPrincipal, "kerberos-server-principal", os.Getenv(envKrbServer),
		"the servers' whole `principal` (default: --kerberos-service and the host's canonical name)")
	fs.BoolVar(&o.PinServers, "pin-servers", o.envBool(envPinServers),
		"keep the servers of --zk instead of following the members listed in /zookeeper/config (as behind a load balancer or proxy)")
	// Help shows no secret taken from the environment as a default.
	for _, secret := range []string{"auth", "sasl-password"} {
		fs.Lookup(secret).DefValue = ""
	}
	grouped(fs, groupConn, map[string]string{"zk": envServers, "chroot": envChroot, "session-timeout": envSessionTimeout,
		"auth": envAuth, "acl": envACL, "tls": envTLS, "tls-ca": envTLSCA, "tls-cert": envTLSCert, "tls-key": envTLSKey,
		"connect-timeout": envConnectTimeout, "sasl-user": envSASLUser, "sasl-password": envSASLPassword,
		"sasl-password-file": envSASLPassFile, "kerberos-principal": envKrbPrincipal, "kerberos-keytab": envKrbKeytab,
		"kerberos-config": envKrbConfig, "kerberos-service": envKrbService, "kerberos-server-principal": envKrbServer,
		"pin-servers": envPinServers})
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

func (o *ConnOptions) envDuration(name string, def time.Duration) time.Duration {
	return envValue(o, name, def, time.ParseDuration, "not a duration (like 10s)")
}

func (o *ConnOptions) envBool(name string) bool {
	return envValue(o, name, false, strconv.ParseBool, "want true or false")
}

// envValue reads the environment variable name with parse. Unset, it is
// def; a value parse refuses is def too, and a usage error for Config to
// report, saying what is wanted.
func envValue[T any](o *ConnOptions, name string, def T, parse func(string) (T, error), wanted string) T {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	x, err := parse(v)
	if err != nil {
		o.envErrs = append(o.envErrs, fmt.Errorf("%s=%q: %s", name, v, wanted))
		return def
	}
	return x
}

// Config builds the Session configuration. Bad values, given as flags or
// in the environment, are usage errors.
func (o *ConnOptions) Config() (zkcoord.Config, error) {
	if len(o.envErrs) > 0 {
		return zkcoord.Config{}, &ExitError{Code: ExitUsage, Err: errors.Join(o.envErrs...)}
	}
	// A missing chroot is an error: the tools create it only when asked
	// (create --parents), and a read never writes.
	cfg := zkcoord.Config{SessionTimeout: o.SessionTimeout, Chroot: o.Chroot, ChrootMustExist: true, PinServers: o.PinServers}
	if strings.TrimSpace(strings.ReplaceAll(o.Servers, ",", "")) == "" {
		return cfg, Usagef("--zk: no servers given")
	}
	servers, chroot, err := zkcoord.ParseConnectString(o.Servers)
	if err != nil {
		return cfg, Usagef("--zk: %v", err)
	}
	cfg.Servers = servers
	if chroot != "" {
		if o.Chroot != "" && o.Chroot != chroot {
			return cfg, Usagef("--zk names the chroot %s and --chroot %s: give it once", chroot, o.Chroot)
		}
		cfg.Chroot, o.Chroot = chroot, chroot
	}
	if o.Chroot != "" {
		if err := zkcoord.ValidatePath(o.Chroot); err != nil {
			return cfg, Usagef("--chroot: %v", err)
		}
	}
	if o.SessionTimeout <= 0 {
		return cfg, Usagef("--session-timeout must be positive")
	}
	if o.ConnectTimeout <= 0 {
		return cfg, Usagef("--connect-timeout must be positive")
	}
	if o.Auth != "" {
		if !strings.Contains(o.Auth, ":") {
			return cfg, Usagef("--auth: want user:password")
		}
		cfg.Auth = []zkcoord.Auth{{Scheme: "digest", Credential: o.Auth}}
	}
	if cfg.SASL, err = o.sasl(); err != nil {
		return cfg, err
	}
	switch o.ACL {
	case "open", "":
	case "creator":
		if o.Auth == "" && cfg.SASL == nil {
			return cfg, Usagef("--acl creator needs --auth, --sasl-user or --kerberos-principal (the creator is the authenticated user)")
		}
		cfg.ACL = zkcoord.AuthACL(zkcoord.PermAll)
	default:
		return cfg, Usagef("--acl: want open or creator, not %q", o.ACL)
	}
	if o.TLS || o.TLSCA != "" || o.TLSCert != "" || o.TLSKey != "" {
		tc, err := o.tlsConfig()
		if err != nil {
			return cfg, err
		}
		cfg.TLS = tc
	}
	return cfg, nil
}

// sasl builds the SASL mechanism of the flags, or nil without one.
func (o *ConnOptions) sasl() (zkcoord.SASL, error) {
	krb := o.KerberosPrincipal != "" || o.KerberosKeytab != ""
	switch {
	case o.SASLUser != "" && krb:
		return nil, Usagef("--sasl-user and --kerberos-principal: give one SASL mechanism")
	case o.SASLUser != "":
		if o.SASLPassword != "" && o.SASLPasswordFile != "" {
			return nil, Usagef("--sasl-password and --sasl-password-file: give the password once")
		}
		password := o.SASLPassword
		if o.SASLPasswordFile != "" {
			b, err := os.ReadFile(o.SASLPasswordFile)
			if err != nil {
				return nil, Usagef("--sasl-password-file: %v", err)
			}
			password = strings.TrimRight(string(b), "\r\n")
		}
		return zkcoord.DigestMD5{User: o.SASLUser, Password: password}, nil
	case o.SASLPassword != "" || o.SASLPasswordFile != "":
		return nil, Usagef("a SASL password needs --sasl-user")
	case krb:
		if o.KerberosPrincipal == "" || o.KerberosKeytab == "" {
			return nil, Usagef("--kerberos-principal and --kerberos-keytab go together")
		}
		m, err := kerberos.New(kerberos.Config{Principal: o.KerberosPrincipal, Keytab: o.KerberosKeytab,
			Krb5Conf: o.KerberosConfig, Service: o.KerberosService, ServerPrincipal: o.KerberosServerPrincipal})
		if err != nil {
			return nil, Usagef("%v", err)
		}
		return m, nil
	}
	return nil, nil
}

func (o *ConnOptions) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return nil, Usagef("--tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, Usagef("--tls-ca: no PEM certificate in %s", o.TLSCA)
		}
		tc.RootCAs = pool
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, Usagef("--tls-cert and --tls-key go together")
	}
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, Usagef("--tls-cert/--tls-key: %v", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// PassOn returns the flags that give another zkcoord process the same
// credentials (SASL's too), ACL, TLS, chroot and pinning of the servers
// (not the servers or timeouts).
func (o *ConnOptions) PassOn() []string {
	args := []string{"--chroot", o.Chroot, "--auth", o.Auth, "--acl", o.ACL,
		"--tls-ca", o.TLSCA, "--tls-cert", o.TLSCert, "--tls-key", o.TLSKey,
		"--sasl-user", o.SASLUser, "--sasl-password", o.SASLPassword, "--sasl-password-file", o.SASLPasswordFile,
		"--kerberos-principal", o.KerberosPrincipal, "--kerberos-keytab", o.KerberosKeytab,
		"--kerberos-config", o.KerberosConfig, "--kerberos-service", o.KerberosService,
		"--kerberos-server-principal", o.KerberosServerPrincipal}
	if o.TLS {
		args = append(args, "--tls")
	} else {
		args = append(args, "--tls=false")
	}
	return append(args, "--pin-servers="+strconv.FormatBool(o.PinServers))
}

// Connect opens a Session, waiting at most timeout, and turns the usual
// failures into messages an operator can act on. With log at the debug
// level, the Session logs there too.
func Connect(ctx context.Context, cfg zkcoord.Config, timeout time.Duration, log *slog.Logger) (*zkcoord.Session, error) {
	cfg = withSessionLog(ctx, cfg, log)
	cctx, cancel := context.WithTimeoutCause(ctx, timeout, errConnectTimeout)
	defer cancel()
	sess, err := zkcoord.Connect(cctx, cfg)
	if err != nil {
		return nil, explainConnect(ctx, cfg, timeout, errors.Is(context.Cause(cctx), errConnectTimeout), err)
	}
	logConnected(log, sess)
	return sess, nil
}

// Supervise runs work on one Session after another, as zkcoord.Supervise
// does, for a command that rides out a ZooKeeper incident: when a Session
// is Lost or Expired, work starts again from scratch on a new one. The
// first Session is held to Connect's rules: it must come within timeout,
// and a failure is reported as Connect reports it. Later ones are waited
// for as long as it takes, with backoff; each failed attempt and each new
// Session is logged. opts must not hold WithRecoveryEvents. It returns
// what zkcoord.Supervise returns.
func Supervise(ctx context.Context, cfg zkcoord.Config, timeout time.Duration, log *slog.Logger,
	work func(ctx context.Context, sess *zkcoord.Session) error, opts ...zkcoord.SuperviseOption) error {
	cfg = withSessionLog(ctx, cfg, log)
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	first := time.AfterFunc(timeout, func() { cancel(errConnectTimeout) })
	defer first.Stop()
	logEvent := logRecovery(log)
	begun := false // events come in order, on one goroutine
	events, stopEvents := fifo.Relay(16, func(ev zkcoord.RecoveryEvent) {
		switch {
		case ev.Kind == zkcoord.SessionStarted:
			begun = true
		case ev.Kind == zkcoord.Recovering && !begun &&
			!errors.Is(ev.Err, context.DeadlineExceeded) && !errors.Is(ev.Err, context.Canceled):
			// As for Connect, only a timeout is worth another attempt
			// before the first Session.
			cancel(ev.Err)
			return
		}
		logEvent(ev)
	})
	started := false // work runs only on Supervise's goroutine: no lock needed
	err := zkcoord.Supervise(sctx, cfg, func(ctx context.Context, sess *zkcoord.Session) error {
		if !started {
			if !first.Stop() {
				return context.Cause(sctx) // too late: the connect timeout ran out
			}
			started = true
			logConnected(log, sess)
		}
		return work(ctx, sess)
	}, append([]zkcoord.SuperviseOption{zkcoord.WithRecoveryEvents(events)}, opts...)...)
	stopEvents()
	if started || err == nil {
		return err
	}
	cause := context.Cause(sctx)
	if ctx.Err() == nil && cause != nil && !errors.Is(cause, errConnectTimeout) {
		err = cause // the first attempt's failure
	}
	return explainConnect(ctx, cfg, timeout, errors.Is(cause, errConnectTimeout), err)
}

// logRecovery logs what a Supervise does between Sessions.
func logRecovery(log *slog.Logger) func(zkcoord.RecoveryEvent) {
	return func(ev zkcoord.RecoveryEvent) {
		switch ev.Kind {
		case zkcoord.Recovering:
			log.Warn("could not open a ZooKeeper session; trying again", "attempt", ev.Attempt, "err", ev.Err)
		case zkcoord.SessionEnded:
			log.Warn("opening a new ZooKeeper session", "ended", fmt.Sprintf("0x%x", ev.Session))
		case zkcoord.Recovered:
			log.Warn("in contact with ZooKeeper again, with a new session: carrying on",
				"session", fmt.Sprintf("0x%x", ev.Session))
		}
	}
}

// errConnectTimeout is the cause of a connection that took too long.
var errConnectTimeout = errors.New("connect timeout")

// withSessionLog gives the Session log when it logs at the debug level:
// the Session's own logs; what matters otherwise is reported by the
// command.
func withSessionLog(ctx context.Context, cfg zkcoord.Config, log *slog.Logger) zkcoord.Config {
	if log.Enabled(ctx, slog.LevelDebug) {
		cfg.Logger = log // the Session's own logs; what matters otherwise is reported by the command
	} else {
		// The Session's warnings (a server refusing the connection, an
		// unknown host, an ensemble whose timing defeats Lost) at once.
		cfg.Logger = slog.New(warnOnly{log.Handler()})
	}
	return cfg
}

func logConnected(log *slog.Logger, sess *zkcoord.Session) {
	log.Debug("connected", "server", sess.Server(), "session", fmt.Sprintf("0x%x", sess.ID()),
		"timeout", sess.Timeout())
}

// explainConnect turns the failure of a first connection into a message an
// operator can act on; timedOut says that the connect timeout ran out.
func explainConnect(ctx context.Context, cfg zkcoord.Config, timeout time.Duration, timedOut bool, err error) error {
	switch {
	case timedOut:
		return fmt.Errorf("cannot reach ZooKeeper at %s within %v: are the servers running and reachable? (set them with --zk or %s)",
			strings.Join(cfg.Servers, ","), timeout, envServers)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, zkcoord.ErrAuthFailed):
		flag := "--auth"
		switch {
		case cfg.SASL == nil:
		case cfg.SASL.Mechanism() == "GSSAPI":
			flag = "--kerberos-principal"
		default:
			flag = "--sasl-user"
		}
		return fmt.Errorf("ZooKeeper rejected the credentials of %s: %w", flag, err)
	case errors.Is(err, zkcoord.ErrInvalidConfig):
		return Usagef("%v", err)
	case errors.Is(err, zkcoord.ErrNoAuth):
		return fmt.Errorf("not allowed to create the chroot %s: %w", cfg.Chroot, err)
	case errors.Is(err, zkcoord.ErrNoNode) && cfg.Chroot != "":
		return fmt.Errorf("the chroot %s does not exist: check --chroot, --zk and %s, or create it: zkcoord create --parents %s (without the chroot)",
			cfg.Chroot, envChroot, cfg.Chroot)
	}
	return fmt.Errorf("connecting to %s: %w", strings.Join(cfg.Servers, ","), err)
}

// CloseSession closes sess, waiting a bounded time.
func CloseSession(sess *zkcoord.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout()+5*time.Second)
	defer cancel()
	_ = sess.Close(ctx)
}

// warnOnly passes on a handler's records of level warn and above.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnOnly{w.Handler.WithAttrs(attrs)}
}

func (w warnOnly) WithGroup(name string) slog.Handler { return warnOnly{w.Handler.WithGroup(name)} }
