// Package wire is ZooKeeper's client protocol as bytes: jute's binary
// encoding, the records a client sends and receives, the protocol's
// numbers (operations, error codes, event types, keeper states, create
// modes, permissions, watch modes) and length-prefixed frames.
//
// It is written from ZooKeeper's own definitions, not from another
// client: the records from zookeeper-jute's zookeeper.jute, the encoding
// from jute's BinaryInputArchive and BinaryOutputArchive, the numbers from
// ZooDefs, KeeperException, Watcher and CreateMode, multi and multiRead
// from MultiOperationRecord and MultiResponse, and the framing, the
// connect handshake and the reserved xids from ClientCnxn and
// ClientCnxnSocket. The server's FinalRequestProcessor says which record
// answers which request; each record's comment names its OpCode and reply.
//
// # Encoding
//
// An Encoder appends to a byte slice and a Decoder reads one; every record
// has Encode and Decode methods, and Marshal, Unmarshal and AppendFrame
// put them together. Integers are big-endian, a boolean is one byte, a
// buffer or string is an int32 length and the bytes (-1 for null), a
// vector an int32 count and the elements. A nil []byte is sent as null and
// an empty one as empty, since ZooKeeper keeps node data null and empty
// apart; vectors are never sent as null, strings only where the server
// needs it (a reconfig's absent lists).
//
// Decoding never panics on arbitrary bytes and never allocates more than
// the bytes could hold: a length or count larger than what remains is an
// error wrapping ErrMalformed, not an allocation. The decoders are fuzzed.
// Unmarshal ignores bytes after the last field, as ZooKeeper's client
// does, so a newer server may append fields.
//
// # Frames
//
// Every message on a connection is a frame: an int32 length and that many
// bytes. The client's first frame is a ConnectRequest alone, the server's
// a ConnectResponse; after that a request is a RequestHeader and the
// request's record, a reply a ReplyHeader and, when its Err is OK, the
// reply's record. Replies come in the order of the requests, except for
// watch events (xid XidNotification, a WatcherEvent), which come between
// them. FrameWriter refuses frames above the server's jute.maxbuffer
// (MaxBuffer unless told otherwise), which would make the server close
// the connection; FrameReader refuses frames above DefaultMaxFrame unless
// told otherwise, a little more, to hold a reply of the largest node.
//
// # The connection
//
// This package has no connection: internal/zkconn is the client on top
// of it (dialing and re-dialing, the handshake, pings, the request
// pipeline, watches and their re-arming with setWatches2, auth re-sent
// on reconnect). zkcoord's Session moves onto that from go-zookeeper in
// a later step. The package's own tests speak to a real ZooKeeper with
// these records, one request at a time, to prove the encodings against
// the server; what they found about particular server versions is in
// the records' comments.
package wire
