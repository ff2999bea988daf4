package zkserver

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// KerberosServerPrincipal is the principal of every server started
// WithKerberos: the service "zookeeper" on host "localhost", the name a
// client canonicalizes 127.0.0.1 to, as ZooKeeper's own client does.
const KerberosServerPrincipal = "zookeeper/localhost@" + KDCRealm

// WithSASLDigest makes the servers authenticate clients with SASL
// DIGEST-MD5 against users, a map of user names to passwords: a JAAS
// Server section with ZooKeeper's DigestLoginModule, and the SASL
// authentication provider, so that ACLs of scheme sasl name those users.
func WithSASLDigest(users map[string]string) Option {
	return func(o *options) { o.saslUsers = users }
}

// WithKerberos makes the servers authenticate clients with SASL GSSAPI
// (Kerberos) in kdc's realm, as KerberosServerPrincipal, whose keytab it
// creates; ACLs of scheme sasl then name clients by their principal
// ("client@ZKTEST.LOCAL"). It cannot be combined with WithSASLDigest.
func WithKerberos(kdc *KDC) Option {
	return func(o *options) { o.kdc = kdc }
}

// saslSetup writes the JAAS configuration WithSASLDigest or WithKerberos
// asks for and returns the Java options that point the servers at it.
func saslSetup(dir string, o options) ([]string, error) {
	var module string
	var entries [][2]string
	var args []string
	switch {
	case o.saslUsers != nil && o.kdc != nil:
		return nil, errors.New("zkserver: WithSASLDigest and WithKerberos exclude each other")
	case o.saslUsers != nil:
		module = "org.apache.zookeeper.server.auth.DigestLoginModule"
		users := slices.Sorted(maps.Keys(o.saslUsers))
		for _, u := range users {
			entries = append(entries, [2]string{"user_" + u, o.saslUsers[u]})
		}
	case o.kdc != nil:
		keytab, err := o.kdc.AddPrincipal(KerberosServerPrincipal)
		if err != nil {
			return nil, err
		}
		module = "com.sun.security.auth.module.Krb5LoginModule"
		entries = [][2]string{
			{"useKeyTab", "true"}, {"keyTab", keytab}, {"storeKey", "true"},
			{"useTicketCache", "false"}, {"principal", KerberosServerPrincipal},
		}
		args = append(args, "-Djava.security.krb5.conf="+o.kdc.ConfigPath())
	default:
		return nil, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Server {\n\t%s required", module)
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	for _, e := range entries {
		fmt.Fprintf(&b, "\n\t%s=\"%s\"", e[0], quote.Replace(e[1]))
	}
	b.WriteString(";\n};\n")
	path := filepath.Join(dir, "jaas.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return nil, err
	}
	return append(args, "-Djava.security.auth.login.config="+path), nil
}
