package zkconn

import (
	"context"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// SASL authenticates every connection of the session with a SASL
// mechanism, right after the handshake and before anything else is
// written (AuthPackets, re-armed watches, queued requests).
type SASL struct {
	// Mechanism names the mechanism ("DIGEST-MD5", "GSSAPI") in errors.
	Mechanism string
	// Start begins one exchange on a new connection to server (the
	// "host:port" dialed) and returns the first token to send (empty for
	// a mechanism without an initial response, as DIGEST-MD5) and the
	// step that answers each of the server's tokens.
	Start func(ctx context.Context, server string) (first []byte, next SASLStep, err error)
}

// SASLStep takes the server's token and returns the next token to send.
// done says the exchange has ended on the client's side: with a nil
// token nothing more is sent; with a token, it is sent and the server's
// answer, an empty token, ends the exchange (GSSAPI's last step).
type SASLStep func(challenge []byte) (response []byte, done bool, err error)

// maxSASLSteps bounds the round trips of one exchange; DIGEST-MD5 takes
// two, GSSAPI two or three.
const maxSASLSteps = 10

// authenticate runs the SASL exchange on a connection just opened, as
// ZooKeeperSaslClient does: each token goes in a GetSASLRequest (opcode
// sasl, an ordinary xid), each answer is a SetSASLResponse. A server that
// refuses answers AuthFailed and closes the connection: that, and a
// mechanism's own error (a server that cannot prove its identity, a
// challenge it cannot answer, no credentials), fails with an error
// wrapping wire.ErrAuthFailed, which ends the client; a network error, or
// ctx ending while the mechanism starts, is the connection's failure only.
func (c *Client) authenticate(ctx context.Context, fw *wire.FrameWriter, fr *wire.FrameReader, addr string) error {
	mech := c.cfg.SASL
	authFailed := func(err error) error { return &saslError{mech.Mechanism, addr, err} }
	token, next, err := mech.Start(ctx, addr)
	if err != nil {
		if ctx.Err() != nil {
			// Out of time, or the client is closing: not a refusal.
			return fmt.Errorf("zkconn: SASL %s with %s: %w (%w)", mech.Mechanism, addr, ctx.Err(), err)
		}
		return authFailed(err)
	}
	last := false
	for range maxSASLSteps {
		c.xid++
		if c.xid <= 0 {
			c.xid = 1
		}
		xid := c.xid
		if token == nil {
			token = []byte{} // an empty token, never a null one
		}
		h := wire.RequestHeader{Xid: xid, Type: wire.OpSASL}
		sent := time.Now()
		if err := fw.WriteFrame(&h, &wire.GetSASLRequest{Token: token}); err != nil {
			return err
		}
		b, err := fr.ReadFrame()
		if err != nil {
			return err
		}
		d := wire.NewDecoder(b)
		var rh wire.ReplyHeader
		rh.Decode(d)
		if d.Err() != nil {
			return d.Err()
		}
		if rh.Xid != xid {
			return fmt.Errorf("zkconn: reply with xid %d to the SASL request %d", rh.Xid, xid)
		}
		if rh.Err != wire.OK {
			return authFailed(refusedError{rh.Err})
		}
		var resp wire.SetSASLResponse
		resp.Decode(d)
		if d.Err() != nil {
			return d.Err()
		}
		c.renewed(sent)
		if last {
			return nil
		}
		token, last, err = next(resp.Token)
		if err != nil {
			return authFailed(err)
		}
		if last && token == nil {
			return nil
		}
	}
	return authFailed(fmt.Errorf("no end after %d steps", maxSASLSteps))
}

// saslError is a failed SASL exchange: it wraps wire.ErrAuthFailed and
// says why, without the server's code when the server said nothing.
type saslError struct {
	mech, addr string
	err        error
}

// Error says what failed without a package name of its own: the Session
// reports it wrapped in zkcoord.ErrAuthFailed ("authentication failed").
func (e *saslError) Error() string {
	return "SASL " + e.mech + " with " + e.addr + ": " + e.err.Error()
}

// refusedError is the server's refusal of a SASL step; its ZooKeeper
// error stays in the chain.
type refusedError struct{ code error }

func (e refusedError) Error() string { return "the server refused the credentials" }
func (e refusedError) Unwrap() error { return e.code }

func (e *saslError) Unwrap() []error { return []error{wire.ErrAuthFailed, e.err} }
