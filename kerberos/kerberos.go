package kerberos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/zkcoord/zkcoord"
)

// DefaultService is the service name of ZooKeeper's servers
// (zookeeper.sasl.client.username).
const DefaultService = "zookeeper"

// Config says who the client is and how to reach the realm.
type Config struct {
	// Principal is the client's principal, "name" or "name@REALM" (the
	// default realm of krb5.conf when it has none).
	Principal string
	// Keytab is the path of a keytab holding the principal's keys.
	Keytab string
	// Krb5Conf is the path of krb5.conf. Default: $KRB5_CONFIG, else
	// /etc/krb5.conf.
	Krb5Conf string
	// Service is the service name of the servers' principals. Default
	// DefaultService.
	Service string
	// ServerPrincipal, if set, is the servers' principal, the same for
	// every server ("zookeeper/zk.example.com"; a realm after "@" must
	// be the one krb5.conf maps the host to, or the client's if it maps
	// it to none). Default: Service and the canonical name of the host
	// dialed.
	ServerPrincipal string
}

// SASL is the GSSAPI mechanism for a zkcoord.Config's SASL field. It is
// safe for concurrent use by any number of Sessions.
type SASL struct {
	user, realm string
	service     string
	server      string // ServerPrincipal without its realm, or ""
	keytab      *keytab.Keytab
	conf        *krbconfig.Config
}

var _ zkcoord.SASL = (*SASL)(nil)

// New reads the keytab and krb5.conf; the KDC is asked nothing before a
// Session connects.
func New(cfg Config) (*SASL, error) {
	if cfg.Principal == "" || cfg.Keytab == "" {
		return nil, errors.New("kerberos: a principal and its keytab are needed")
	}
	confPath := cfg.Krb5Conf
	if confPath == "" {
		confPath = os.Getenv("KRB5_CONFIG")
	}
	if confPath == "" {
		confPath = "/etc/krb5.conf"
	}
	conf, err := krbconfig.Load(confPath)
	if err != nil {
		return nil, fmt.Errorf("kerberos: reading %s: %w", confPath, err)
	}
	kt, err := keytab.Load(cfg.Keytab)
	if err != nil {
		return nil, fmt.Errorf("kerberos: reading keytab %s: %w", cfg.Keytab, err)
	}
	user, realm, _ := strings.Cut(cfg.Principal, "@")
	if realm == "" {
		realm = conf.LibDefaults.DefaultRealm
	}
	if realm == "" {
		return nil, fmt.Errorf("kerberos: principal %q has no realm, and %s names no default_realm", cfg.Principal, confPath)
	}
	m := &SASL{user: user, realm: realm, service: cfg.Service, keytab: kt, conf: conf}
	if m.service == "" {
		m.service = DefaultService
	}
	if cfg.ServerPrincipal != "" {
		var srealm string
		m.server, srealm, _ = strings.Cut(cfg.ServerPrincipal, "@")
		// The KDC is asked for the realm krb5.conf maps the host to, or
		// else the client's: a realm given must be that one.
		host := m.server[strings.LastIndex(m.server, "/")+1:]
		want := conf.ResolveRealm(host)
		if want == "" {
			want = realm
		}
		if srealm != "" && srealm != want {
			return nil, fmt.Errorf("kerberos: server principal %s: %s maps %s to the realm %s; map it to %s in [domain_realm]",
				cfg.ServerPrincipal, confPath, host, want, srealm)
		}
	}
	return m, nil
}

// Mechanism returns "GSSAPI".
func (m *SASL) Mechanism() string { return "GSSAPI" }

// Principal returns the client's principal, "name@REALM".
func (m *SASL) Principal() string { return m.user + "@" + m.realm }

// Start logs in with the keytab, asks the KDC for a ticket to server's
// principal and returns the exchange with its first token, the AP-REQ.
// It returns when ctx ends; the KDC exchanges then finish apart, bounded
// by their own timeouts.
func (m *SASL) Start(ctx context.Context, server string) (zkcoord.SASLExchange, []byte, error) {
	spn := m.server
	if spn == "" {
		host, _, err := net.SplitHostPort(server)
		if err != nil {
			host = server
		}
		spn = m.service + "/" + canonicalHost(ctx, host)
	}
	type started struct {
		ex    *exchange
		first []byte
		err   error
	}
	// The KDC exchanges take no context: they run apart, bounded by the
	// KDC timeouts, so that Start returns when ctx ends.
	done := make(chan started, 1)
	go func() {
		ex, first, err := m.login(spn)
		done <- started{ex, first, err}
	}()
	select {
	case s := <-done:
		if s.err != nil {
			return nil, nil, s.err
		}
		return s.ex, s.first, nil
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("kerberos: ticket for %s: %w", spn, ctx.Err())
	}
}

// login logs in with the keytab, gets a ticket for spn and makes the
// exchange's first token.
func (m *SASL) login(spn string) (*exchange, []byte, error) {
	cl := krbclient.NewWithKeytab(m.user, m.realm, m.keytab, m.conf, krbclient.DisablePAFXFAST(true))
	// A client per connection: it holds its TGT only as long as the
	// exchange needs it, and leaves no renewal goroutine behind.
	defer cl.Destroy()
	if err := cl.Login(); err != nil {
		return nil, nil, fmt.Errorf("kerberos: login as %s: %w", m.Principal(), err)
	}
	tkt, key, err := cl.GetServiceTicket(spn)
	if err != nil {
		return nil, nil, fmt.Errorf("kerberos: ticket for %s: %w", spn, err)
	}
	ex, first, err := newExchange(cl.Credentials.Domain(), cl.Credentials.CName(), tkt, key)
	if err != nil {
		return nil, nil, fmt.Errorf("kerberos: AP-REQ for %s: %w", spn, err)
	}
	return ex, first, nil
}

// canonicalHost returns the name a reverse lookup gives host's address,
// as ZooKeeper's client canonicalizes (InetAddress.getCanonicalHostName),
// or host itself when there is none.
func canonicalHost(ctx context.Context, host string) string {
	addr := host
	if net.ParseIP(host) == nil {
		addrs, err := net.DefaultResolver.LookupHost(ctx, host)
		if err != nil || len(addrs) == 0 {
			return strings.ToLower(host)
		}
		addr = addrs[0]
	}
	names, err := net.DefaultResolver.LookupAddr(ctx, addr)
	if err != nil || len(names) == 0 {
		return strings.ToLower(host)
	}
	return strings.ToLower(strings.TrimSuffix(names[0], "."))
}
