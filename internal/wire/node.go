package wire

// The requests and replies that read and write nodes. Each request names
// the OpCode it is sent with; a reply's record follows its ReplyHeader only
// when the header's Err is OK.

// CreateRequest creates a node: sent as OpCreate (reply CreateResponse),
// OpCreate2 (reply Create2Response, with the new node's Stat) or, with
// Flags ModeContainer, as OpCreateContainer (reply Create2Response).
type CreateRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags CreateMode
}

// Encode appends the record.
func (r *CreateRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	encodeVector(e, r.ACL)
	e.Int32(int32(r.Flags))
}

// Decode reads the record.
func (r *CreateRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = decodeVector[ACL](d, "vector<ACL>", aclMinSize)
	r.Flags = CreateMode(d.Int32())
}

// CreateTTLRequest creates a node that the server deletes once it has had
// no children for TTL milliseconds after its last change: sent as
// OpCreateTTL with Flags ModePersistentWithTTL or
// ModePersistentSequentialWithTTL; reply Create2Response. Servers refuse
// it with Unimplemented unless started with
// zookeeper.extendedTypesEnabled=true.
type CreateTTLRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags CreateMode
	TTL   int64
}

// Encode appends the record.
func (r *CreateTTLRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	encodeVector(e, r.ACL)
	e.Int32(int32(r.Flags))
	e.Int64(r.TTL)
}

// Decode reads the record.
func (r *CreateTTLRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = decodeVector[ACL](d, "vector<ACL>", aclMinSize)
	r.Flags = CreateMode(d.Int32())
	r.TTL = d.Int64()
}

// PathRecord is the record of a path alone, which ZooKeeper's jute
// declares five times alike for the operations here (and a sixth time
// as GetMaxChildrenRequest, which no OpCode sends): CreateResponse,
// SyncRequest, SyncResponse, GetACLRequest and GetAllChildrenNumberRequest.
type PathRecord struct {
	Path string
}

// Encode appends the record.
func (r *PathRecord) Encode(e *Encoder) { e.String(r.Path) }

// Decode reads the record.
func (r *PathRecord) Decode(d *Decoder) { r.Path = d.String() }

// CreateResponse is the reply to OpCreate: the created node's path (with
// its sequence number for a sequential node).
type CreateResponse = PathRecord

// Create2Response is the reply to OpCreate2, OpCreateTTL and
// OpCreateContainer: the created node's path and Stat.
type Create2Response struct {
	Path string
	Stat Stat
}

// Encode appends the record.
func (r *Create2Response) Encode(e *Encoder) {
	e.String(r.Path)
	r.Stat.Encode(e)
}

// Decode reads the record.
func (r *Create2Response) Decode(d *Decoder) {
	r.Path = d.String()
	r.Stat.Decode(d)
}

// VersionRequest is the record of the requests that hold a node to its
// version, Path and Version, which ZooKeeper's jute declares twice alike:
// DeleteRequest and CheckVersionRequest.
type VersionRequest struct {
	Path    string
	Version int32
}

// Encode appends the record.
func (r *VersionRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int32(r.Version)
}

// Decode reads the record.
func (r *VersionRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Version = d.Int32()
}

// DeleteRequest deletes a node if its version is Version (-1: any
// version); sent as OpDelete, the reply has no record.
type DeleteRequest = VersionRequest

// ReadRequest is the record of the reads that may leave a watch, Path and
// Watch, which ZooKeeper's jute declares four times alike: ExistsRequest,
// GetDataRequest, GetChildrenRequest and GetChildren2Request.
type ReadRequest struct {
	Path  string
	Watch bool
}

// Encode appends the record.
func (r *ReadRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Bool(r.Watch)
}

// Decode reads the record.
func (r *ReadRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Watch = d.Bool()
}

// ExistsRequest reads a node's Stat (OpExists, reply ExistsResponse; a
// missing node is the error NoNode). Watch leaves a watch on the node,
// also when it does not exist.
type ExistsRequest = ReadRequest

// StatResponse is the record of the replies that are a node's Stat
// alone, which ZooKeeper's jute declares three times alike:
// ExistsResponse, SetDataResponse and SetACLResponse.
type StatResponse struct {
	Stat Stat
}

// Encode appends the record.
func (r *StatResponse) Encode(e *Encoder) { r.Stat.Encode(e) }

// Decode reads the record.
func (r *StatResponse) Decode(d *Decoder) { r.Stat.Decode(d) }

// ExistsResponse is the reply to OpExists.
type ExistsResponse = StatResponse

// GetDataRequest reads a node's data and Stat (OpGetData, reply
// GetDataResponse). Watch leaves a data watch.
type GetDataRequest = ReadRequest

// GetDataResponse is the reply to OpGetData and to OpReconfig (the new
// configuration). Data is nil for a node created with null data.
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

// Encode appends the record.
func (r *GetDataResponse) Encode(e *Encoder) {
	e.Buffer(r.Data)
	r.Stat.Encode(e)
}

// Decode reads the record.
func (r *GetDataResponse) Decode(d *Decoder) {
	r.Data = d.Buffer()
	r.Stat.Decode(d)
}

// SetDataRequest writes a node's data if its version is Version (-1: any
// version); OpSetData, reply SetDataResponse.
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

// Encode appends the record.
func (r *SetDataRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	e.Int32(r.Version)
}

// Decode reads the record.
func (r *SetDataRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.Version = d.Int32()
}

// SetDataResponse is the reply to OpSetData: the node's new Stat.
type SetDataResponse = StatResponse

// GetChildrenRequest lists a node's children (OpGetChildren, reply
// GetChildrenResponse). Watch leaves a child watch.
type GetChildrenRequest = ReadRequest

// GetChildrenResponse is the reply to OpGetChildren: the children's names
// (not paths), in no particular order.
type GetChildrenResponse struct {
	Children []string
}

// Encode appends the record.
func (r *GetChildrenResponse) Encode(e *Encoder) { e.Strings(r.Children) }

// Decode reads the record.
func (r *GetChildrenResponse) Decode(d *Decoder) { r.Children = d.Strings() }

// GetChildren2Request lists a node's children together with its Stat
// (OpGetChildren2, reply GetChildren2Response).
type GetChildren2Request = ReadRequest

// GetChildren2Response is the reply to OpGetChildren2.
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

// Encode appends the record.
func (r *GetChildren2Response) Encode(e *Encoder) {
	e.Strings(r.Children)
	r.Stat.Encode(e)
}

// Decode reads the record.
func (r *GetChildren2Response) Decode(d *Decoder) {
	r.Children = d.Strings()
	r.Stat.Decode(d)
}

// CheckVersionRequest asserts that a node's version is Version: an
// operation of a multi (OpCheck). Sent alone, it is never answered: the
// server builds the reply from a Stat the check does not set and fails
// to send it (seen on 3.8; the current sources do the same), and the
// request hangs until the session expires. Send it only inside a multi.
type CheckVersionRequest = VersionRequest

// SyncRequest makes the server catch up with the leader before it answers
// later requests (OpSync, reply SyncResponse with the same path).
type SyncRequest = PathRecord

// SyncResponse is the reply to OpSync.
type SyncResponse = PathRecord

// GetACLRequest reads a node's ACL (OpGetACL, reply GetACLResponse).
type GetACLRequest = PathRecord

// GetACLResponse is the reply to OpGetACL.
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

// Encode appends the record.
func (r *GetACLResponse) Encode(e *Encoder) {
	encodeVector(e, r.ACL)
	r.Stat.Encode(e)
}

// Decode reads the record.
func (r *GetACLResponse) Decode(d *Decoder) {
	r.ACL = decodeVector[ACL](d, "vector<ACL>", aclMinSize)
	r.Stat.Decode(d)
}

// SetACLRequest replaces a node's ACL if its ACL version is Version (-1:
// any); OpSetACL, reply SetACLResponse.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32
}

// Encode appends the record.
func (r *SetACLRequest) Encode(e *Encoder) {
	e.String(r.Path)
	encodeVector(e, r.ACL)
	e.Int32(r.Version)
}

// Decode reads the record.
func (r *SetACLRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.ACL = decodeVector[ACL](d, "vector<ACL>", aclMinSize)
	r.Version = d.Int32()
}

// SetACLResponse is the reply to OpSetACL.
type SetACLResponse = StatResponse

// GetEphemeralsRequest lists the session's ephemeral nodes whose paths
// start with PrefixPath ("/" for all); OpGetEphemerals, reply
// GetEphemeralsResponse.
type GetEphemeralsRequest struct {
	PrefixPath string
}

// Encode appends the record.
func (r *GetEphemeralsRequest) Encode(e *Encoder) { e.String(r.PrefixPath) }

// Decode reads the record.
func (r *GetEphemeralsRequest) Decode(d *Decoder) { r.PrefixPath = d.String() }

// GetEphemeralsResponse is the reply to OpGetEphemerals: full paths.
type GetEphemeralsResponse struct {
	Ephemerals []string
}

// Encode appends the record.
func (r *GetEphemeralsResponse) Encode(e *Encoder) { e.Strings(r.Ephemerals) }

// Decode reads the record.
func (r *GetEphemeralsResponse) Decode(d *Decoder) { r.Ephemerals = d.Strings() }

// GetAllChildrenNumberRequest counts a node's descendants
// (OpGetAllChildrenNumber, reply GetAllChildrenNumberResponse).
type GetAllChildrenNumberRequest = PathRecord

// GetAllChildrenNumberResponse is the reply to OpGetAllChildrenNumber.
type GetAllChildrenNumberResponse struct {
	TotalNumber int32
}

// Encode appends the record.
func (r *GetAllChildrenNumberResponse) Encode(e *Encoder) { e.Int32(r.TotalNumber) }

// Decode reads the record.
func (r *GetAllChildrenNumberResponse) Decode(d *Decoder) { r.TotalNumber = d.Int32() }

// ReconfigRequest changes an ensemble's membership (OpReconfig, reply
// GetDataResponse holding the new configuration). CurConfigID -1 applies
// it whatever the current configuration. An empty string is sent as null,
// which is how the server tells an absent list from an empty one
// (NewMembers null: an incremental change).
type ReconfigRequest struct {
	JoiningServers string
	LeavingServers string
	NewMembers     string
	CurConfigID    int64
}

// Encode appends the record.
func (r *ReconfigRequest) Encode(e *Encoder) {
	e.nullString(r.JoiningServers)
	e.nullString(r.LeavingServers)
	e.nullString(r.NewMembers)
	e.Int64(r.CurConfigID)
}

// Decode reads the record.
func (r *ReconfigRequest) Decode(d *Decoder) {
	r.JoiningServers = d.String()
	r.LeavingServers = d.String()
	r.NewMembers = d.String()
	r.CurConfigID = d.Int64()
}
