// Package kerberos authenticates zkcoord Sessions to ZooKeeper with
// Kerberos: the SASL mechanism GSSAPI (RFC 4752) over Kerberos V5 (RFC
// 4121), as ZooKeeper's own client does with a JAAS Client section
// using Krb5LoginModule. It is a module of its own, so that only the
// programs that use Kerberos depend on a Kerberos library
// (github.com/jcmturner/gokrb5).
//
//	mech, err := kerberos.New(kerberos.Config{
//		Principal: "app@EXAMPLE.COM",
//		Keytab:    "/etc/app/app.keytab",
//	})
//	if err != nil {
//		return err
//	}
//	s, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers, SASL: mech})
//
// On every connection, the first and each reconnect, the mechanism logs
// in with the keytab, asks the KDC for a ticket to the server's principal
// and proves the client's identity to the server, which then knows the
// session as ("sasl", "app@EXAMPLE.COM") (less the realm or host if the
// server is configured to remove them). The server proves its identity
// in turn: its answer is checked with the ticket's session key. No
// security layer is negotiated (ZooKeeper uses none): use TLS to encrypt
// the connection.
//
// The server's principal is, as for ZooKeeper's client,
// Config.ServerPrincipal if set (zookeeper.server.principal), otherwise
// the service name (Config.Service, default "zookeeper", ZooKeeper's
// zookeeper.sasl.client.username) and the server's host name, with an IP
// address or alias canonicalized by a reverse lookup
// (zookeeper.sasl.client.canonicalize.hostname, on by default):
// "zookeeper/zk1.example.com", in the realm krb5.conf's domain_realm
// maps the host to, or else the default realm.
//
// See docs/security.md for a working setup from scratch.
package kerberos
