package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

var testStat = Stat{
	Czxid: 0x100000002, Mzxid: 0x100000003, Ctime: 1700000000000, Mtime: 1700000000001,
	Version: 2, Cversion: 3, Aversion: 1, EphemeralOwner: 0x10000abcd,
	DataLength: 5, NumChildren: 7, Pzxid: 0x100000004,
}

var testACL = []ACL{
	{Perms: PermAll, ID: ID{Scheme: "world", ID: "anyone"}},
	{Perms: PermRead | PermAdmin, ID: ID{Scheme: "digest", ID: "u:hash="}},
}

// records holds a filled-in value of every record of the package.
func records() []Record {
	return []Record{
		&ID{Scheme: "ip", ID: "10.0.0.0/8"},
		&ACL{Perms: PermWrite, ID: ID{Scheme: "world", ID: "anyone"}},
		&testStat,
		&ClientInfo{AuthScheme: "ip", User: "127.0.0.1"},
		&ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 42, TimeOut: 30000, SessionID: 0x1234, Passwd: make([]byte, 16), ReadOnly: true},
		&ConnectResponse{ProtocolVersion: 0, TimeOut: 4000, SessionID: 0x1234, Passwd: []byte("0123456789abcdef"), ReadOnly: true},
		&RequestHeader{Xid: 12, Type: OpCreate2},
		&ReplyHeader{Xid: 12, Zxid: 99, Err: ErrNodeExists},
		&AuthPacket{Type: 0, Scheme: "digest", Auth: []byte("u:p")},
		&GetSASLRequest{Token: []byte{1, 2}},
		&SetSASLRequest{Token: []byte{3}},
		&SetSASLResponse{Token: []byte{}},
		&WhoAmIResponse{ClientInfo: []ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}, {AuthScheme: "digest", User: "u"}}},
		&ErrorResponse{Err: ErrBadVersion},
		&CreateRequest{Path: "/a/b", Data: []byte("x"), ACL: testACL, Flags: ModeEphemeralSequential},
		&CreateRequest{Path: "/null-data", ACL: testACL, Flags: ModeContainer},
		&CreateTTLRequest{Path: "/t", Data: []byte{}, ACL: testACL, Flags: ModePersistentWithTTL, TTL: 60000},
		&CreateResponse{Path: "/a/b0000000001"},
		&Create2Response{Path: "/a/b0000000001", Stat: testStat},
		&DeleteRequest{Path: "/a", Version: -1},
		&ExistsRequest{Path: "/a", Watch: true},
		&ExistsResponse{Stat: testStat},
		&GetDataRequest{Path: "/a", Watch: true},
		&GetDataResponse{Data: []byte("hello"), Stat: testStat},
		&SetDataRequest{Path: "/a", Data: []byte("v2"), Version: 3},
		&SetDataResponse{Stat: testStat},
		&GetChildrenRequest{Path: "/", Watch: true},
		&GetChildrenResponse{Children: []string{"a", "b", "zookeeper"}},
		&GetChildren2Request{Path: "/", Watch: false},
		&GetChildren2Response{Children: []string{"a"}, Stat: testStat},
		&CheckVersionRequest{Path: "/a", Version: 4},
		&SyncRequest{Path: "/a"},
		&SyncResponse{Path: "/a"},
		&GetACLRequest{Path: "/a"},
		&GetACLResponse{ACL: testACL, Stat: testStat},
		&SetACLRequest{Path: "/a", ACL: testACL, Version: 1},
		&SetACLResponse{Stat: testStat},
		&GetEphemeralsRequest{PrefixPath: "/"},
		&GetEphemeralsResponse{Ephemerals: []string{"/e1", "/x/e2"}},
		&GetAllChildrenNumberRequest{Path: "/"},
		&GetAllChildrenNumberResponse{TotalNumber: 12},
		&ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2:3;4", LeavingServers: "1", CurConfigID: -1},
		&WatcherEvent{Type: EventNodeChildrenChanged, State: StateSyncConnected, Path: "/a"},
		&SetWatches{RelativeZxid: 77, DataWatches: []string{"/d"}, ExistWatches: []string{"/e"}, ChildWatches: []string{"/c", "/c2"}},
		&SetWatches2{SetWatches: SetWatches{RelativeZxid: 78, DataWatches: []string{"/d"}}, PersistentWatches: []string{"/p"}, PersistentRecursiveWatches: []string{"/r"}},
		&AddWatchRequest{Path: "/a", Mode: AddWatchPersistentRecursive},
		&CheckWatchesRequest{Path: "/a", Type: WatcherData},
		&RemoveWatchesRequest{Path: "/a", Type: WatcherAny},
		&MultiHeader{Type: OpCheck, Done: false, Err: -1},
		&MultiRequest{Ops: []MultiOp{
			{Type: OpCheck, Path: "/lock", Version: 0},
			{Type: OpCreate, Path: "/a", Data: []byte("x"), ACL: testACL, Flags: ModePersistent},
			{Type: OpCreate2, Path: "/b", ACL: testACL, Flags: ModeEphemeral},
			{Type: OpCreateContainer, Path: "/c", Data: []byte{}, ACL: testACL, Flags: ModeContainer},
			{Type: OpCreateTTL, Path: "/t", ACL: testACL, Flags: ModePersistentSequentialWithTTL, TTL: 1000},
			{Type: OpSetData, Path: "/a", Data: []byte("y"), Version: -1},
			{Type: OpDelete, Path: "/a", Version: 2},
		}},
		&MultiRequest{Ops: []MultiOp{{Type: OpGetChildren, Path: "/", Watch: true}, {Type: OpGetData, Path: "/a"}}},
		&MultiRequest{},
		&MultiResponse{Results: []MultiResult{
			{Type: OpCheck},
			{Type: OpCreate, Path: "/a"},
			{Type: OpCreate2, Path: "/b", Stat: testStat},
			{Type: OpSetData, Stat: testStat},
			{Type: OpDelete},
			{Type: OpGetChildren, Children: []string{"x", "y"}},
			{Type: OpGetData, Data: []byte("d"), Stat: testStat},
			{Type: OpError, Err: ErrNoNode},
			{Type: OpError, Err: OK},
		}},
		&MultiResponse{},
	}
}

// newOf returns a new zero record of r's type.
func newOf(r Record) Record { return reflect.New(reflect.TypeOf(r).Elem()).Interface().(Record) }

// Every record decodes from its encoding to the value encoded, using all
// the bytes, and a truncated encoding is malformed.
func TestRoundTrip(t *testing.T) {
	for _, r := range records() {
		t.Run(reflect.TypeOf(r).Elem().Name(), func(t *testing.T) {
			b := Marshal(nil, r)
			got := newOf(r)
			d := NewDecoder(b)
			got.Decode(d)
			if d.Err() != nil {
				t.Fatalf("decode: %v", d.Err())
			}
			if d.Len() != 0 {
				t.Errorf("%d bytes left after decoding", d.Len())
			}
			if !reflect.DeepEqual(got, r) {
				t.Errorf("decoded\n%+v\nwant\n%+v", got, r)
			}
			if !bytes.Equal(Marshal(nil, got), b) {
				t.Error("re-encoding differs")
			}
			// Every proper prefix is malformed, except where jute
			// allows a missing last field (the readOnly byte).
			for n := range len(b) {
				err := Unmarshal(b[:n], newOf(r))
				optional := n == len(b)-1 && (reflect.TypeOf(r) == reflect.TypeOf(&ConnectRequest{}) || reflect.TypeOf(r) == reflect.TypeOf(&ConnectResponse{}))
				if optional {
					if err != nil {
						t.Errorf("without the readOnly byte: %v", err)
					}
					continue
				}
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("%d of %d bytes: err = %v, want ErrMalformed", n, len(b), err)
				}
			}
		})
	}
}

// frame returns b with its int32 length in front.
func frame(b ...[]byte) []byte {
	body := bytes.Join(b, nil)
	n := len(body)
	return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, body...)
}

// The golden frames are written out by hand from zookeeper.jute and the
// framing of ClientCnxn: they check the field order and widths, which a
// round trip alone cannot.
func TestGoldenFrames(t *testing.T) {
	passwd := []byte("0123456789abcdef")
	for _, tc := range []struct {
		name string
		recs []Record
		want []byte
	}{{
		name: "connect request for a new session",
		recs: []Record{&ConnectRequest{TimeOut: 30000, Passwd: make([]byte, PasswordLen)}},
		want: frame(
			[]byte{0, 0, 0, 0},                    // protocolVersion
			[]byte{0, 0, 0, 0, 0, 0, 0, 0},        // lastZxidSeen
			[]byte{0, 0, 0x75, 0x30},              // timeOut 30000
			[]byte{0, 0, 0, 0, 0, 0, 0, 0},        // sessionId
			[]byte{0, 0, 0, 16}, make([]byte, 16), // passwd
			[]byte{0}, // readOnly
		),
	}, {
		name: "connect request attaching to a session",
		recs: []Record{&ConnectRequest{LastZxidSeen: 0x1_0000_0005, TimeOut: 10000, SessionID: 0x100abcdef, Passwd: passwd, ReadOnly: true}},
		want: frame(
			[]byte{0, 0, 0, 0},
			[]byte{0, 0, 0, 1, 0, 0, 0, 5},
			[]byte{0, 0, 0x27, 0x10},
			[]byte{0, 0, 0, 1, 0, 0xab, 0xcd, 0xef},
			[]byte{0, 0, 0, 16}, passwd,
			[]byte{1},
		),
	}, {
		name: "connect response",
		recs: []Record{&ConnectResponse{TimeOut: 4000, SessionID: 0x100abcdef, Passwd: passwd}},
		want: frame(
			[]byte{0, 0, 0, 0},       // protocolVersion
			[]byte{0, 0, 0x0f, 0xa0}, // timeOut 4000
			[]byte{0, 0, 0, 1, 0, 0xab, 0xcd, 0xef},
			[]byte{0, 0, 0, 16}, passwd,
			[]byte{0},
		),
	}, {
		name: "create of an ephemeral node open to the world",
		recs: []Record{
			&RequestHeader{Xid: 1, Type: OpCreate},
			&CreateRequest{Path: "/a", Data: []byte("x"), ACL: WorldACL(PermAll), Flags: ModeEphemeral},
		},
		want: frame(
			[]byte{0, 0, 0, 1}, // xid
			[]byte{0, 0, 0, 1}, // type create
			[]byte{0, 0, 0, 2, '/', 'a'},
			[]byte{0, 0, 0, 1, 'x'},
			[]byte{0, 0, 0, 1},    // one ACL
			[]byte{0, 0, 0, 0x1f}, // perms ALL
			[]byte{0, 0, 0, 5, 'w', 'o', 'r', 'l', 'd'},
			[]byte{0, 0, 0, 6, 'a', 'n', 'y', 'o', 'n', 'e'},
			[]byte{0, 0, 0, 1}, // flags EPHEMERAL
		),
	}, {
		name: "ping",
		recs: []Record{&RequestHeader{Xid: XidPing, Type: OpPing}},
		want: frame([]byte{0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 11}),
	}, {
		name: "multi of a check and a delete",
		recs: []Record{
			&RequestHeader{Xid: 2, Type: OpMulti},
			&MultiRequest{Ops: []MultiOp{{Type: OpCheck, Path: "/l", Version: 3}, {Type: OpDelete, Path: "/a", Version: -1}}},
		},
		want: frame(
			[]byte{0, 0, 0, 2, 0, 0, 0, 14},
			[]byte{0, 0, 0, 13, 0, 0xff, 0xff, 0xff, 0xff}, // check, not done, err -1
			[]byte{0, 0, 0, 2, '/', 'l', 0, 0, 0, 3},
			[]byte{0, 0, 0, 2, 0, 0xff, 0xff, 0xff, 0xff}, // delete
			[]byte{0, 0, 0, 2, '/', 'a', 0xff, 0xff, 0xff, 0xff},
			[]byte{0xff, 0xff, 0xff, 0xff, 1, 0xff, 0xff, 0xff, 0xff}, // done
		),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			recs := make([]Encodable, len(tc.recs))
			for i, r := range tc.recs {
				recs[i] = r
			}
			got, err := AppendFrame(nil, 0, recs...)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("encoded\n% x\nwant\n% x", got, tc.want)
			}
			d := NewDecoder(tc.want[4:])
			for _, r := range tc.recs {
				back := newOf(r)
				back.Decode(d)
				if !reflect.DeepEqual(back, r) {
					t.Errorf("decoded %+v, want %+v", back, r)
				}
			}
			if d.Err() != nil || d.Len() != 0 {
				t.Fatalf("decoding the golden bytes: err %v, %d bytes left", d.Err(), d.Len())
			}
		})
	}
}

// A connect response from a server before 3.4 ends after the password; it
// reads as not read-only.
func TestConnectResponseWithoutReadOnly(t *testing.T) {
	b := []byte{0, 0, 0, 0, 0, 0, 0x0f, 0xa0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, 7}
	var r ConnectResponse
	if err := Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	want := ConnectResponse{TimeOut: 4000, SessionID: 9, Passwd: []byte{7}}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v, want %+v", r, want)
	}
}

// A multi element of a type ZooKeeper does not define is malformed, in a
// request and in a reply, and so is a sequence without its end marker.
func TestMultiMalformed(t *testing.T) {
	bad := Marshal(nil, &MultiHeader{Type: OpGetACL}, &GetACLRequest{Path: "/a"}, &multiEnd)
	if err := Unmarshal(bad, &MultiRequest{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("request: err = %v, want ErrMalformed", err)
	}
	if err := Unmarshal(bad, &MultiResponse{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("response: err = %v, want ErrMalformed", err)
	}
	open := Marshal(nil, &MultiHeader{Type: OpDelete})
	if err := Unmarshal(open, &MultiResponse{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("no end marker: err = %v, want ErrMalformed", err)
	}
}

// A reconfig sends absent lists as null, which is how the server tells an
// incremental change from a new membership.
func TestReconfigNullStrings(t *testing.T) {
	b := Marshal(nil, &ReconfigRequest{LeavingServers: "2", CurConfigID: -1})
	want := bytes.Join([][]byte{
		{0xff, 0xff, 0xff, 0xff},
		{0, 0, 0, 1, '2'},
		{0xff, 0xff, 0xff, 0xff},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	}, nil)
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded\n% x\nwant\n% x", b, want)
	}
}

// Codes are errors with ZooKeeper's names, comparable with errors.Is.
func TestCodes(t *testing.T) {
	if OK.Err() != nil {
		t.Error("OK.Err() is not nil")
	}
	err := error(ErrNoNode)
	if !errors.Is(ErrNoNode.Err(), ErrNoNode) || errors.Is(err, ErrNodeExists) {
		t.Error("errors.Is does not tell codes apart")
	}
	if got := ErrNoNode.Error(); got != "zookeeper: NoNode (-101)" {
		t.Errorf("Error() = %q", got)
	}
	if got := Code(-99).String(); got != "Code(-99)" {
		t.Errorf("String() = %q", got)
	}
	if OpMultiRead.String() != "multiRead" || EventNodeCreated.String() != "NodeCreated" || StateExpired.String() != "Expired" {
		t.Error("names do not match ZooKeeper's")
	}
	if !ModeEphemeralSequential.Ephemeral() || !ModeEphemeralSequential.Sequential() ||
		ModeContainer.Ephemeral() || !ModePersistentSequentialWithTTL.TTL() || PermAll != 31 {
		t.Error("create mode or permission bits do not match ZooKeeper's")
	}
}
