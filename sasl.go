package zkcoord

import (
	"context"
	"errors"

	"github.com/zkcoord/zkcoord/internal/zkconn"
)

// SASL is a SASL mechanism a Session authenticates every connection with
// (Config.SASL), right after the handshake and before any other request,
// on the first connection and again on every reconnect. The server then
// knows the session by the identity ("sasl", name) the mechanism proved,
// which ACLs of scheme sasl grant rights to. A server that refuses ends
// the Session: Connect, or the Session's Err after a reconnect, returns
// an error wrapping ErrAuthFailed that says why.
//
// DigestMD5 is built in; Kerberos (GSSAPI) is in the module
// github.com/zkcoord/zkcoord/kerberos, so that only programs that use it
// depend on a Kerberos library.
type SASL interface {
	// Mechanism returns the mechanism's registered name, such as
	// "DIGEST-MD5" or "GSSAPI".
	Mechanism() string
	// Start begins an exchange on a new connection to server, the
	// "host:port" dialed, and returns it with the first token to send
	// (empty for a mechanism without an initial response). ctx bounds
	// the exchange; Start may block on it (to ask a KDC for a ticket).
	Start(ctx context.Context, server string) (SASLExchange, []byte, error)
}

// SASLExchange is one exchange of a SASL mechanism, on one connection.
type SASLExchange interface {
	// Next takes the server's token and returns the next one to send.
	// done says the exchange has ended on this side: with a nil token,
	// nothing more is sent; with a token, it is sent and the server's
	// answer ends the exchange. An error fails the authentication.
	Next(challenge []byte) (response []byte, done bool, err error)
}

// DigestMD5 is the SASL DIGEST-MD5 mechanism with a user and password
// from the server's JAAS configuration (a Server section with
// org.apache.zookeeper.server.auth.DigestLoginModule and
// user_<name>="<password>"). The session's identity is ("sasl", User).
// The password never crosses the wire, and the server proves it knows it
// too; the connection is not encrypted (use TLS for that).
type DigestMD5 struct {
	User     string
	Password string
}

// Mechanism returns "DIGEST-MD5".
func (DigestMD5) Mechanism() string { return "DIGEST-MD5" }

// Start returns a new exchange; DIGEST-MD5 has no initial response.
func (d DigestMD5) Start(context.Context, string) (SASLExchange, []byte, error) {
	if d.User == "" {
		return nil, nil, errors.New("DIGEST-MD5 needs a user name")
	}
	return zkconn.NewDigestMD5(d.User, d.Password), []byte{}, nil
}

// zkconnSASL adapts a mechanism for the connection.
func zkconnSASL(m SASL) *zkconn.SASL {
	if m == nil {
		return nil
	}
	return &zkconn.SASL{
		Mechanism: m.Mechanism(),
		Start: func(ctx context.Context, server string) ([]byte, zkconn.SASLStep, error) {
			ex, first, err := m.Start(ctx, server)
			if err != nil {
				return nil, nil, err
			}
			return first, ex.Next, nil
		},
	}
}
