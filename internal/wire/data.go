package wire

// The records of zookeeper.jute's module org.apache.zookeeper.data.

// ID is an identity in an ACL (jute's Id): a scheme such as "world",
// "digest", "ip", "sasl" and an id within it.
type ID struct {
	Scheme string
	ID     string
}

// Encode appends the record.
func (r *ID) Encode(e *Encoder) {
	e.String(r.Scheme)
	e.String(r.ID)
}

// Decode reads the record.
func (r *ID) Decode(d *Decoder) {
	r.Scheme = d.String()
	r.ID = d.String()
}

// ACL grants the permissions Perms to the identity ID.
type ACL struct {
	Perms Perm
	ID    ID
}

// aclMinSize is the smallest encoding of an ACL: perms and two empty strings.
const aclMinSize = 4 + 4 + 4

// Encode appends the record.
func (r *ACL) Encode(e *Encoder) {
	e.Int32(int32(r.Perms))
	r.ID.Encode(e)
}

// Decode reads the record.
func (r *ACL) Decode(d *Decoder) {
	r.Perms = Perm(d.Int32())
	r.ID.Decode(d)
}

// WorldACL returns the ACL giving perms to everyone (world:anyone), as
// ZooDefs.Ids.OPEN_ACL_UNSAFE does with PermAll.
func WorldACL(perms Perm) []ACL {
	return []ACL{{Perms: perms, ID: ID{Scheme: "world", ID: "anyone"}}}
}

// Stat is a node's metadata as the server returns it.
type Stat struct {
	Czxid          int64 // zxid of the create
	Mzxid          int64 // zxid of the last data change
	Ctime          int64 // create time, milliseconds since the epoch
	Mtime          int64 // last data change time, milliseconds since the epoch
	Version        int32 // data version
	Cversion       int32 // children version
	Aversion       int32 // ACL version
	EphemeralOwner int64 // owning session of an ephemeral node, 0 otherwise
	DataLength     int32
	NumChildren    int32
	Pzxid          int64 // zxid of the last change of the children
}

// Encode appends the record.
func (r *Stat) Encode(e *Encoder) {
	e.Int64(r.Czxid)
	e.Int64(r.Mzxid)
	e.Int64(r.Ctime)
	e.Int64(r.Mtime)
	e.Int32(r.Version)
	e.Int32(r.Cversion)
	e.Int32(r.Aversion)
	e.Int64(r.EphemeralOwner)
	e.Int32(r.DataLength)
	e.Int32(r.NumChildren)
	e.Int64(r.Pzxid)
}

// Decode reads the record.
func (r *Stat) Decode(d *Decoder) {
	r.Czxid = d.Int64()
	r.Mzxid = d.Int64()
	r.Ctime = d.Int64()
	r.Mtime = d.Int64()
	r.Version = d.Int32()
	r.Cversion = d.Int32()
	r.Aversion = d.Int32()
	r.EphemeralOwner = d.Int64()
	r.DataLength = d.Int32()
	r.NumChildren = d.Int32()
	r.Pzxid = d.Int64()
}

// ClientInfo is one identity of a connection, as whoAmI returns it.
type ClientInfo struct {
	AuthScheme string
	User       string
}

// Encode appends the record.
func (r *ClientInfo) Encode(e *Encoder) {
	e.String(r.AuthScheme)
	e.String(r.User)
}

// Decode reads the record.
func (r *ClientInfo) Decode(d *Decoder) {
	r.AuthScheme = d.String()
	r.User = d.String()
}
