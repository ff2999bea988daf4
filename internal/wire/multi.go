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

// request returns the record op's Type sends, holding op's fields, or
// nil for a Type a MultiOp may not have.
func (op *MultiOp) request() Record {
	switch op.Type {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{Path: op.Path, Data: op.Data, ACL: op.ACL, Flags: op.Flags}
	case OpCreateTTL:
		return &CreateTTLRequest{Path: op.Path, Data: op.Data, ACL: op.ACL, Flags: op.Flags, TTL: op.TTL}
	case OpDelete, OpCheck:
		return &VersionRequest{Path: op.Path, Version: op.Version}
	case OpSetData:
		return &SetDataRequest{Path: op.Path, Data: op.Data, Version: op.Version}
	case OpGetChildren, OpGetData:
		return &ReadRequest{Path: op.Path, Watch: op.Watch}
	}
	return nil
}

// setRequest sets op's fields from rec, a record of request's.
func (op *MultiOp) setRequest(rec Record) {
	switch r := rec.(type) {
	case *CreateRequest:
		op.Path, op.Data, op.ACL, op.Flags = r.Path, r.Data, r.ACL, r.Flags
	case *CreateTTLRequest:
		op.Path, op.Data, op.ACL, op.Flags, op.TTL = r.Path, r.Data, r.ACL, r.Flags, r.TTL
	case *VersionRequest:
		op.Path, op.Version = r.Path, r.Version
	case *SetDataRequest:
		op.Path, op.Data, op.Version = r.Path, r.Data, r.Version
	case *ReadRequest:
		op.Path, op.Watch = r.Path, r.Watch
	}
}

// ValidMultiOp reports whether t is a Type a MultiOp may have.
func ValidMultiOp(t OpCode) bool {
	op := MultiOp{Type: t}
	return op.request() != nil
}

// Encode appends the record. An operation of a Type not listed at MultiOp
// is written as its header alone, which the server refuses; callers check
// their operations first (see ValidMultiOp).
func (r *MultiRequest) Encode(e *Encoder) {
	for i := range r.Ops {
		op := &r.Ops[i]
		h := MultiHeader{Type: op.Type, Err: -1}
		h.Encode(e)
		if rec := op.request(); rec != nil {
			rec.Encode(e)
		}
	}
	multiEnd.Encode(e)
}

// Decode reads the record; an operation of an unknown Type is malformed.
func (r *MultiRequest) Decode(d *Decoder) {
	r.Ops = decodeSequence(d, func(h MultiHeader) MultiOp {
		op := MultiOp{Type: h.Type}
		if rec := op.request(); rec != nil {
			rec.Decode(d)
			op.setRequest(rec)
		} else {
			d.Fail("multi operation of type %v", h.Type)
		}
		return op
	})
}

// decodeSequence reads a multi's sequence up to the MultiHeader that ends
// it, reading each entry after its header with entry. It returns nil if
// the sequence is malformed.
func decodeSequence[T any](d *Decoder, entry func(MultiHeader) T) []T {
	var entries []T
	for d.err == nil {
		var h MultiHeader
		h.Decode(d)
		if d.err != nil || h.Done {
			break
		}
		entries = append(entries, entry(h))
	}
	if d.err != nil {
		return nil
	}
	return entries
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

// reply returns the record a result of res's Type carries, holding res's
// fields, and whether the Type is one a MultiResult may have; the record
// is nil for OpDelete and OpCheck, which carry none.
func (res *MultiResult) reply() (Record, bool) {
	switch res.Type {
	case OpCreate:
		return &CreateResponse{Path: res.Path}, true
	case OpCreate2:
		return &Create2Response{Path: res.Path, Stat: res.Stat}, true
	case OpDelete, OpCheck:
		return nil, true
	case OpSetData:
		return &SetDataResponse{Stat: res.Stat}, true
	case OpGetChildren:
		return &GetChildrenResponse{Children: res.Children}, true
	case OpGetData:
		return &GetDataResponse{Data: res.Data, Stat: res.Stat}, true
	case OpError:
		return &ErrorResponse{Err: res.Err}, true
	}
	return nil, false
}

// setReply sets res's fields from rec, a record of reply's.
func (res *MultiResult) setReply(rec Record) {
	switch r := rec.(type) {
	case *PathRecord:
		res.Path = r.Path
	case *Create2Response:
		res.Path, res.Stat = r.Path, r.Stat
	case *StatResponse:
		res.Stat = r.Stat
	case *GetChildrenResponse:
		res.Children = r.Children
	case *GetDataResponse:
		res.Data, res.Stat = r.Data, r.Stat
	case *ErrorResponse:
		res.Err = r.Err
	}
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
		if rec, _ := res.reply(); rec != nil {
			rec.Encode(e)
		}
	}
	multiEnd.Encode(e)
}

// Decode reads the record; a result of an unknown Type is malformed. The
// Err of an OpError result is its ErrorResponse's, as ZooKeeper's client
// reads it.
func (r *MultiResponse) Decode(d *Decoder) {
	r.Results = decodeSequence(d, func(h MultiHeader) MultiResult {
		res := MultiResult{Type: h.Type}
		rec, known := res.reply()
		if !known {
			d.Fail("multi result of type %v", h.Type)
		} else if rec != nil {
			rec.Decode(d)
			res.setReply(rec)
		}
		return res
	})
}
