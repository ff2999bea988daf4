package wire

// multi and multiRead (MultiOperationRecord.java and MultiResponse.java):
// a sequence of operations, each a MultiHeader and its record, ended by a
// MultiHeader with Done set (Type -1, Err -1). The request is sent as
// OpMulti (writes and checks, applied atomically: all or none) or
// OpMultiRead (getChildren and getData, each answered on its own; servers
// from 3.6 on).

// MultiHeader precedes each operation of a multi request and each result
// of its reply; one with Done set ends the sequence.
type MultiHeader struct {
	Type OpCode
	Done bool
	Err  Code
}

// Encode appends the record.
func (r *MultiHeader) Encode(e *Encoder) {
	e.Int32(int32(r.Type))
	e.Bool(r.Done)
	e.Int32(int32(r.Err))
}

// Decode reads the record.
func (r *MultiHeader) Decode(d *Decoder) {
	r.Type = OpCode(d.Int32())
	r.Done = d.Bool()
	r.Err = Code(d.Int32())
}

// multiEnd is the MultiHeader that ends a sequence.
var multiEnd = MultiHeader{Type: -1, Done: true, Err: -1}

// MultiOp is one operation of a multi or multiRead request. Type decides
// which fields are sent, in the record ZooKeeper defines for it:
//
//	OpCreate, OpCreate2, OpCreateContainer  CreateRequest: Path, Data, ACL, Flags
//	OpCreateTTL                             CreateTTLRequest: Path, Data, ACL, Flags, TTL
//	OpDelete                                DeleteRequest: Path, Version
//	OpSetData                               SetDataRequest: Path, Data, Version
//	OpCheck                                 CheckVersionRequest: Path, Version
//	OpGetChildren (multiRead)               GetChildrenRequest: Path, Watch
//	OpGetData (multiRead)                   GetDataRequest: Path, Watch
//
// The other fields are ignored. A multi mixes only the writes and checks,
// a multiRead only the reads; the server refuses a mix.
type MultiOp struct {
	Type    OpCode
	Path    string
	Data    []byte
	ACL     []ACL
	Flags   CreateMode
	TTL     int64
	Version int32
	Watch   bool
}

// MultiRequest is the record of OpMulti and OpMultiRead.
type MultiRequest struct {
	Ops []MultiOp
}

// Encode appends the record. An operation of a Type not listed at MultiOp
// is written as its header alone, which the server refuses; callers check
// their operations first (see ValidMultiOp).
func (r *MultiRequest) Encode(e *Encoder) {
	for i := range r.Ops {
		op := &r.Ops[i]
		h := MultiHeader{Type: op.Type, Err: -1}
		h.Encode(e)
		switch op.Type {
		case OpCreate, OpCreate2, OpCreateContainer:
			e.String(op.Path)
			e.Buffer(op.Data)
			encodeVector(e, op.ACL)
			e.Int32(int32(op.Flags))
		case OpCreateTTL:
			e.String(op.Path)
			e.Buffer(op.Data)
			encodeVector(e, op.ACL)
			e.Int32(int32(op.Flags))
			e.Int64(op.TTL)
		case OpDelete, OpCheck:
			e.String(op.Path)
			e.Int32(op.Version)
		case OpSetData:
			e.String(op.Path)
			e.Buffer(op.Data)
			e.Int32(op.Version)
		case OpGetChildren, OpGetData:
			e.String(op.Path)
			e.Bool(op.Watch)
		}
	}
	multiEnd.Encode(e)
}

// ValidMultiOp reports whether t is a Type a MultiOp may have.
func ValidMultiOp(t OpCode) bool {
	switch t {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete,
		OpSetData, OpCheck, OpGetChildren, OpGetData:
		return true
	}
	return false
}

// Decode reads the record; an operation of an unknown Type is malformed.
func (r *MultiRequest) Decode(d *Decoder) {
	r.Ops = nil
	for d.err == nil {
		var h MultiHeader
		h.Decode(d)
		if d.err != nil || h.Done {
			break
		}
		op := MultiOp{Type: h.Type}
		switch h.Type {
		case OpCreate, OpCreate2, OpCreateContainer:
			op.Path = d.String()
			op.Data = d.Buffer()
			op.ACL = decodeVector[ACL](d, "vector<ACL>", aclMinSize)
			op.Flags = CreateMode(d.Int32())
		case OpCreateTTL:
			op.Path = d.String()
			op.Data = d.Buffer()
			op.ACL = decodeVector[ACL](d, "vector<ACL>", aclMinSize)
			op.Flags = CreateMode(d.Int32())
			op.TTL = d.Int64()
		case OpDelete, OpCheck:
			op.Path = d.String()
			op.Version = d.Int32()
		case OpSetData:
			op.Path = d.String()
			op.Data = d.Buffer()
			op.Version = d.Int32()
		case OpGetChildren, OpGetData:
			op.Path = d.String()
			op.Watch = d.Bool()
		default:
			d.Fail("multi operation of type %v", h.Type)
		}
		r.Ops = append(r.Ops, op)
	}
	if d.err != nil {
		r.Ops = nil
	}
}

// MultiResult is one result of a multi or multiRead reply. Type decides
// which fields the server sent:
//
//	OpCreate       CreateResponse: Path
//	OpCreate2      Create2Response: Path, Stat (also for createTTL and createContainer)
//	OpDelete       nothing
//	OpCheck        nothing
//	OpSetData      SetDataResponse: Stat
//	OpGetChildren  GetChildrenResponse: Children
//	OpGetData      GetDataResponse: Data, Stat
//	OpError        ErrorResponse: Err
//
// Servers before 3.8.4 (ZOOKEEPER-4026) run a create2 in a multi as a
// create and answer it as OpCreate, without the Stat.
//
// When a multi fails, every result is an OpError: the failed operation's
// carries its error, those before it OK and those after it
// RuntimeInconsistency. In a multiRead each read that failed is an OpError
// and the others succeed.
type MultiResult struct {
	Type     OpCode
	Err      Code
	Path     string
	Stat     Stat
	Data     []byte
	Children []string
}

// MultiResponse is the reply record of OpMulti and OpMultiRead. Its
// ReplyHeader's Err is OK also when the operations failed: the results
// tell.
type MultiResponse struct {
	Results []MultiResult
}

// Encode appends the record. A result of a Type not listed at MultiResult
// is written as its header alone.
func (r *MultiResponse) Encode(e *Encoder) {
	for i := range r.Results {
		res := &r.Results[i]
		h := MultiHeader{Type: res.Type}
		if res.Type == OpError {
			h.Err = res.Err
		}
		h.Encode(e)
		switch res.Type {
		case OpCreate:
			e.String(res.Path)
		case OpCreate2:
			e.String(res.Path)
			res.Stat.Encode(e)
		case OpSetData:
			res.Stat.Encode(e)
		case OpGetChildren:
			e.Strings(res.Children)
		case OpGetData:
			e.Buffer(res.Data)
			res.Stat.Encode(e)
		case OpError:
			e.Int32(int32(res.Err))
		}
	}
	multiEnd.Encode(e)
}

// Decode reads the record; a result of an unknown Type is malformed. The
// Err of an OpError result is its ErrorResponse's, as ZooKeeper's client
// reads it.
func (r *MultiResponse) Decode(d *Decoder) {
	r.Results = nil
	for d.err == nil {
		var h MultiHeader
		h.Decode(d)
		if d.err != nil || h.Done {
			break
		}
		res := MultiResult{Type: h.Type}
		switch h.Type {
		case OpCreate:
			res.Path = d.String()
		case OpCreate2:
			res.Path = d.String()
			res.Stat.Decode(d)
		case OpDelete, OpCheck:
		case OpSetData:
			res.Stat.Decode(d)
		case OpGetChildren:
			res.Children = d.Strings()
		case OpGetData:
			res.Data = d.Buffer()
			res.Stat.Decode(d)
		case OpError:
			res.Err = Code(d.Int32())
		default:
			d.Fail("multi result of type %v", h.Type)
		}
		r.Results = append(r.Results, res)
	}
	if d.err != nil {
		r.Results = nil
	}
}
