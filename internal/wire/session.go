package wire

// The records that open, keep and authenticate a session, and the headers
// every later frame starts with.

// ProtocolVersion is the only protocol version ZooKeeper has had: the
// ProtocolVersion of a ConnectRequest and of the server's ConnectResponse.
const ProtocolVersion = 0

// PasswordLen is the length of a session password; a new session is asked
// for with SessionID 0 and a password of PasswordLen zero bytes.
const PasswordLen = 16

// ConnectRequest is the first frame a client sends on a connection; it has
// no RequestHeader. SessionID 0 asks for a new session; the id and password
// of an existing session ask to attach to it. TimeOut is the session
// timeout asked for, in milliseconds. ReadOnly says the client accepts a
// read-only server. Servers before 3.4 knew no ReadOnly byte; every later
// server reads it.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
}

// Encode appends the record.
func (r *ConnectRequest) Encode(e *Encoder) {
	e.Int32(r.ProtocolVersion)
	e.Int64(r.LastZxidSeen)
	e.Int32(r.TimeOut)
	e.Int64(r.SessionID)
	e.Buffer(r.Passwd)
	e.Bool(r.ReadOnly)
}

// Decode reads the record; a missing ReadOnly byte reads as false, as the
// server's ProtocolManager reads it.
func (r *ConnectRequest) Decode(d *Decoder) {
	r.ProtocolVersion = d.Int32()
	r.LastZxidSeen = d.Int64()
	r.TimeOut = d.Int32()
	r.SessionID = d.Int64()
	r.Passwd = d.Buffer()
	r.ReadOnly = d.optionalBool()
}

// ConnectResponse is the server's answer to a ConnectRequest, again
// without a header. TimeOut is the negotiated session timeout in
// milliseconds. A SessionID of 0 (with TimeOut 0) means the session asked
// for has expired or never existed (or the password was wrong); the server
// then closes the connection. ReadOnly says the server is a read-only one.
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
}

// Encode appends the record.
func (r *ConnectResponse) Encode(e *Encoder) {
	e.Int32(r.ProtocolVersion)
	e.Int32(r.TimeOut)
	e.Int64(r.SessionID)
	e.Buffer(r.Passwd)
	e.Bool(r.ReadOnly)
}

// Decode reads the record; a missing ReadOnly byte (a server before 3.4)
// reads as false, as ZooKeeper's client reads it.
func (r *ConnectResponse) Decode(d *Decoder) {
	r.ProtocolVersion = d.Int32()
	r.TimeOut = d.Int32()
	r.SessionID = d.Int64()
	r.Passwd = d.Buffer()
	r.ReadOnly = d.optionalBool()
}

// RequestHeader starts every request frame after the ConnectRequest. Xid
// numbers the request (the reply carries it back); Type says what follows.
// A ping (XidPing, OpPing), a closeSession (OpCloseSession) and a whoAmI
// (OpWhoAmI) are a header and nothing else.
type RequestHeader struct {
	Xid  int32
	Type OpCode
}

// Encode appends the record.
func (r *RequestHeader) Encode(e *Encoder) {
	e.Int32(r.Xid)
	e.Int32(int32(r.Type))
}

// Decode reads the record.
func (r *RequestHeader) Decode(d *Decoder) {
	r.Xid = d.Int32()
	r.Type = OpCode(d.Int32())
}

// ReplyHeader starts every frame from the server after the
// ConnectResponse. Xid is the request's (or XidNotification for a watch
// event, XidPing, XidAuth); Zxid is the last zxid the server had applied
// when it replied; Err is the outcome. The reply's record follows only
// when Err is OK (the server may send one on errors too, which ZooKeeper's
// client ignores, and so should a reader).
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  Code
}

// Encode appends the record.
func (r *ReplyHeader) Encode(e *Encoder) {
	e.Int32(r.Xid)
	e.Int64(r.Zxid)
	e.Int32(int32(r.Err))
}

// Decode reads the record.
func (r *ReplyHeader) Decode(d *Decoder) {
	r.Xid = d.Int32()
	r.Zxid = d.Int64()
	r.Err = Code(d.Int32())
}

// AuthPacket adds an identity to the connection (request OpAuth, xid
// XidAuth): Scheme is an authentication provider such as "digest", Auth
// its credentials ("user:password" for digest). Type is unused and 0. The
// reply is a ReplyHeader with xid XidAuth and no record; on AuthFailed the
// server closes the connection.
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

// Encode appends the record.
func (r *AuthPacket) Encode(e *Encoder) {
	e.Int32(r.Type)
	e.String(r.Scheme)
	e.Buffer(r.Auth)
}

// Decode reads the record.
func (r *AuthPacket) Decode(d *Decoder) {
	r.Type = d.Int32()
	r.Scheme = d.String()
	r.Auth = d.Buffer()
}

// SASLToken is the record of a SASL exchange, a token alone, which
// ZooKeeper's jute declares three times alike: GetSASLRequest,
// SetSASLRequest and SetSASLResponse.
type SASLToken struct {
	Token []byte
}

// Encode appends the record.
func (r *SASLToken) Encode(e *Encoder) { e.Buffer(r.Token) }

// Decode reads the record.
func (r *SASLToken) Decode(d *Decoder) { r.Token = d.Buffer() }

// GetSASLRequest carries a client's SASL token (request OpSASL); the reply
// is a SetSASLResponse with the server's next token.
type GetSASLRequest = SASLToken

// SetSASLRequest is jute's other SASL request record; ZooKeeper's own
// client sends GetSASLRequest.
type SetSASLRequest = SASLToken

// SetSASLResponse is the server's SASL token.
type SetSASLResponse = SASLToken

// WhoAmIResponse answers OpWhoAmI (a request without a record) with the
// connection's identities.
type WhoAmIResponse struct {
	ClientInfo []ClientInfo
}

// Encode appends the record.
func (r *WhoAmIResponse) Encode(e *Encoder) { encodeVector(e, r.ClientInfo) }

// Decode reads the record.
func (r *WhoAmIResponse) Decode(d *Decoder) {
	r.ClientInfo = decodeVector[ClientInfo](d, "vector<ClientInfo>", 8)
}

// ErrorResponse is the record of an OpError result in a multi reply; it
// is also the (always OK) reply record of addWatch.
type ErrorResponse struct {
	Err Code
}

// Encode appends the record.
func (r *ErrorResponse) Encode(e *Encoder) { e.Int32(int32(r.Err)) }

// Decode reads the record.
func (r *ErrorResponse) Decode(d *Decoder) { r.Err = Code(d.Int32()) }
