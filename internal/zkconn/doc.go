// Package zkconn is zkcoord's own ZooKeeper client connection: one
// ZooKeeper session, kept over a succession of TCP connections, speaking
// the records and frames of internal/wire. Its behaviour follows
// ZooKeeper's own client (ClientCnxn, ClientCnxnSocketNIO, ZooKeeper's
// WatchRegistration and ZKWatchManager) and server (ZooKeeperServer's
// handling of a ConnectRequest); it is written from those sources, not
// from another client.
//
// # The session
//
// Dial opens a new session on one of Config.Servers, tried in a shuffled
// order. Each attempt dials the "host:port" name itself, so a host name
// is resolved again on every attempt. The handshake sends lastZxidSeen,
// the timeout asked for, the session's id and password (zeros for a new
// session) and readOnly false; the server's answer fixes the negotiated
// timeout (SessionTimeout), from which the read timeout (two thirds of
// it, as ClientCnxn) and the ping interval (by default a third of the
// read timeout) follow. A handshake is bounded by the timeout divided among the
// servers, as ClientCnxn's connectTimeout, but never less than a second.
// SetServers replaces the server list while the session lives (the
// Session follows the ensemble's reconfigurations with it): the connection
// stays while its server is listed, and moves to a listed server
// otherwise.
//
// When a connection fails (a read or write error, nothing read for the
// read timeout, a reply out of order), the Client re-attaches to the same
// session, trying the servers in turn with a short random pause before
// each attempt and up to a second after each full round. A server that
// closes the connection without answering the handshake is passed over:
// that is how ZooKeeper refuses a client whose lastZxidSeen is ahead of
// the server, and how a server without a quorum turns clients away. A
// handshake answered with a timeout of zero or less says the session has
// expired: the Client ends for good with wire.ErrSessionExpired. It never
// opens a new session after its first. A refused AuthPacket or SASL
// exchange ends it with wire.ErrAuthFailed, Close with ErrClosed; Done and
// Err report the end.
//
// # Requests
//
// Every call takes a context and writes one request. Calls enter one
// bounded queue (Config.MaxQueued; a call beyond it waits for room,
// bounded by its context), and a single writer goroutine per connection
// writes them in queue order: the order in which calls entered is the
// order on the wire. Start issues a request without waiting for its
// reply, so one goroutine can pipeline several in a known order (a test
// proves it with sequential creates under concurrent traffic).
//
// Each answered call returns a Reply with the zxid and the monotonic time
// its frame began to be written (Sent): the reply proves the session was
// alive on the server after Sent. LastRenewal is the latest such time
// over all answered requests, pings and handshakes included.
//
// The outcomes of a call that is not answered are told apart with
// errors.Is:
//
//   - ErrNotSent: the request was never written, and never will be. Its
//     context ended while it was queued, or the connection was lost
//     (wire.ErrConnectionLoss too) or the client ended (the end's error
//     too) before the writer took it, or it was too large to send
//     (wire.ErrFrameTooLarge).
//   - ErrOutcomeUnknown: its context ended after it was written and
//     before its reply; it may still take effect (its reply, when it
//     comes, is read and dropped and sets no watch).
//   - wire.ErrConnectionLoss without ErrNotSent: the connection was lost
//     after the request was written; it may have taken effect. The
//     error wraps the network error, which is never returned bare.
//
// When a connection is lost, every request written and unanswered and
// every request queued fails at the loss; none is written again on the
// next connection, since retrying is the caller's decision. Calls made
// while no connection is up wait in the queue for the next one (bounded
// by their contexts). Requests written and awaiting replies are bounded
// only by the callers waiting for them.
//
// Pings are written when nothing else was written for the ping interval;
// their replies renew like any other.
//
// # Watches
//
// A call with a watch returns a *Watch when the reply says the server set
// one, as ZooKeeper's WatchRegistration decides: exists leaves a watch
// whether or not the node exists (an exist watch on a missing node, which
// fires on its creation), getData and getChildren only when it exists.
// AddWatch sets persistent and persistent-recursive watches (servers from
// 3.6 on); RemoveWatches removes the session's watches of a type on a
// path from the server and then every local one, each receiving a last
// removal event; CheckWatches asks the server.
//
// Replies and watch events are handed by the reader, in the order read,
// to one dispatcher goroutine through an unbounded queue: the reader never
// waits for a consumer, and the dispatcher never blocks (a caller's
// channel holds its one answer; each Watch queues its events without
// bound). So an event the server sent before a reply is in its Watch's
// queue before that reply's caller returns. A reply that sets or removes
// no watch, read while nothing waits for the dispatcher, is answered by
// the reader itself: the same order, one goroutine hop shorter. A one-shot
// event goes to
// every watch of its kind on its path (ZKWatchManager.materialize), a
// persistent-recursive watch receives events for the node and its
// descendants except NodeChildrenChanged.
//
// On a connection loss every watch receives an event of State
// wire.StateDisconnected and stays armed; on re-attach every watch
// receives wire.StateSyncConnected, and the watches are armed again with
// setWatches (setWatches2 when persistent ones are among them) carrying
// the last zxid seen, in batches of about 128 KiB of paths as
// ClientCnxn.primeConnection builds them, written right after the
// AuthPackets and before any queued request. The server then fires at
// once every watch whose node changed while the client was away. When
// the client ends, every watch receives a last event of State
// wire.StateExpired, wire.StateAuthFailed or wire.StateClosed. The
// session's own Watch (Session) receives only these connection events,
// like ZooKeeper's default watcher.
//
// # SASL, auth and chroot
//
// Config.SASL, if set, runs its exchange on every connection right after
// the handshake, inside it, before the writer starts: each token a sasl
// request (GetSASLRequest) with an ordinary xid, each answer a
// SetSASLResponse. So nothing else, not even the AuthPackets, re-armed
// watches or requests queued while disconnected, is written before the
// identity is in place. DigestMD5 is the client side of DIGEST-MD5 as
// ZooKeeper's server expects it. An exchange the server refuses
// (AuthFailed) or the mechanism cannot complete ends the client with an
// error wrapping wire.ErrAuthFailed, like a refused AuthPacket; a network
// error during it is a failed connection attempt.
//
// Config.Auth is sent on every connection before anything else but the
// SASL exchange. There is no chroot here: paths are the server's, and a
// chroot is the Session's.
//
// # Close
//
// Close sends closeSession after every request issued before it, when a
// connection is up, waits for its reply until its context ends, and then
// stops every goroutine; it never waits a fixed time.
//
// # Its user
//
// zkcoord's Session is this package's one user. It drives its state
// machine from the Session watch's events and LastRenewal, sets the ping
// interval its Lost clock needs (Config.PingEvery), drops a connection that
// has gone quiet (Reconnect), ends without closeSession when it declares
// itself lost (Abandon), follows the ensemble's membership (SetServers),
// hands one-shot watch events to channels through Notify, pipelines with
// Start, and does the chroot. TLS is a Config.Dial, SASL a Config.SASL.
// Read-only servers are not supported.
package zkconn
