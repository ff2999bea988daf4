package wire

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/zktest"
)

// TestAgainstZooKeeper speaks to a real ZooKeeper with the package's
// records, one request at a time: each subtest sends requests the way
// ZooKeeper's client does and checks that the server understood them and
// that its replies decode to what the requests did.
func TestAgainstZooKeeper(t *testing.T) {
	cluster := zktest.Start(t)
	addr := cluster.Servers()[0]

	t.Run("handshake, ping and closeSession", func(t *testing.T) {
		c := newSession(t, addr)
		s := c.session
		if s.ProtocolVersion != ProtocolVersion || s.TimeOut <= 0 || s.TimeOut > 10000 ||
			len(s.Passwd) != PasswordLen || s.ReadOnly {
			t.Fatalf("connect response %+v", s)
		}
		// The server sends the readOnly byte: protocolVersion, timeOut,
		// sessionId, passwd and readOnly take 4+4+8+(4+16)+1 bytes.
		if len(c.connectFrame) != 37 {
			t.Errorf("connect response of %d bytes, want 37", len(c.connectFrame))
		}
		c.send(XidPing, OpPing, nil)
		if h := c.reply(XidPing, nil); h.Err != OK {
			t.Fatalf("ping: %+v", h)
		}
		c.closeSession()

		// The closed session cannot be attached to: the server answers
		// with session id 0 and timeout 0.
		again, err := dialSession(t, addr, ConnectRequest{TimeOut: 10000, SessionID: s.SessionID, Passwd: s.Passwd})
		if err != nil {
			t.Fatal(err)
		}
		if again.session.SessionID != 0 || again.session.TimeOut != 0 {
			t.Fatalf("attaching to a closed session: %+v", again.session)
		}
	})

	t.Run("attaching to a session needs its password", func(t *testing.T) {
		c := newSession(t, addr)
		wrong := make([]byte, PasswordLen)
		bad, err := dialSession(t, addr, ConnectRequest{TimeOut: 10000, SessionID: c.session.SessionID, Passwd: wrong})
		if err != nil {
			t.Fatal(err)
		}
		if bad.session.SessionID != 0 {
			t.Fatalf("attached with a wrong password: %+v", bad.session)
		}
		good, err := dialSession(t, addr, ConnectRequest{TimeOut: 10000, SessionID: c.session.SessionID, Passwd: c.session.Passwd})
		if err != nil {
			t.Fatal(err)
		}
		if good.session.SessionID != c.session.SessionID || !bytes.Equal(good.session.Passwd, c.session.Passwd) {
			t.Fatalf("attaching with the password: %+v", good.session)
		}
		good.closeSession()
	})

	t.Run("pipelined requests are answered in order", func(t *testing.T) {
		// Requests written back to back, without waiting, are answered
		// in the order written: one round trip for all of them.
		c := newSession(t, addr)
		c.must(OpCreate, &CreateRequest{Path: "/pipe", ACL: WorldACL(PermAll)}, nil)
		const n = 60
		for i := range n {
			xid := int32(100 + i)
			switch i % 3 {
			case 0:
				c.send(xid, OpCreate, &CreateRequest{Path: "/pipe/n-", ACL: WorldACL(PermAll), Flags: ModePersistentSequential})
			case 1:
				c.send(xid, OpGetData, &GetDataRequest{Path: "/pipe/missing"})
			case 2:
				c.send(xid, OpGetChildren2, &GetChildren2Request{Path: "/pipe"})
			}
		}
		for i := range n {
			xid := int32(100 + i)
			switch i % 3 {
			case 0:
				var cr CreateResponse
				if h := c.reply(xid, &cr); h.Err != OK || cr.Path != fmt.Sprintf("/pipe/n-%010d", i/3) {
					t.Fatalf("reply %d: %v %q", i, h.Err, cr.Path)
				}
			case 1:
				if h := c.reply(xid, nil); h.Err != ErrNoNode {
					t.Fatalf("reply %d: %v", i, h.Err)
				}
			case 2:
				var g GetChildren2Response
				if h := c.reply(xid, &g); h.Err != OK || len(g.Children) != i/3+1 {
					t.Fatalf("reply %d: %v, %d children", i, h.Err, len(g.Children))
				}
			}
		}
	})

	t.Run("create2, exists, getData, setData, delete", func(t *testing.T) {
		c := newSession(t, addr)
		var cr Create2Response
		h := c.must(OpCreate2, &CreateRequest{Path: "/rw", Data: []byte("hello"), ACL: WorldACL(PermAll), Flags: ModeEphemeral}, &cr)
		st := cr.Stat
		if cr.Path != "/rw" || st.Czxid != h.Zxid || st.Mzxid != h.Zxid || st.Pzxid != h.Zxid ||
			st.Version != 0 || st.DataLength != 5 || st.EphemeralOwner != c.session.SessionID || st.Ctime == 0 {
			t.Fatalf("create2 reply %+v, zxid %d", cr, h.Zxid)
		}

		var ex ExistsResponse
		c.must(OpExists, &ExistsRequest{Path: "/rw"}, &ex)
		if ex.Stat != st {
			t.Errorf("exists Stat %+v, want %+v", ex.Stat, st)
		}
		var gd GetDataResponse
		c.must(OpGetData, &GetDataRequest{Path: "/rw"}, &gd)
		if string(gd.Data) != "hello" || gd.Stat != st {
			t.Errorf("getData %+v", gd)
		}

		var sd SetDataResponse
		h = c.must(OpSetData, &SetDataRequest{Path: "/rw", Data: []byte("v2"), Version: 0}, &sd)
		if sd.Stat.Version != 1 || sd.Stat.Mzxid != h.Zxid || sd.Stat.Czxid != st.Czxid || sd.Stat.DataLength != 2 {
			t.Errorf("setData Stat %+v", sd.Stat)
		}
		if h := c.call(OpSetData, &SetDataRequest{Path: "/rw", Version: 0}, nil); h.Err != ErrBadVersion {
			t.Errorf("setData with a stale version: %v", h.Err)
		}

		if h := c.call(OpDelete, &DeleteRequest{Path: "/rw", Version: 0}, nil); h.Err != ErrBadVersion {
			t.Errorf("delete with a stale version: %v", h.Err)
		}
		c.must(OpDelete, &DeleteRequest{Path: "/rw", Version: 1}, nil)
		if h := c.call(OpExists, &ExistsRequest{Path: "/rw"}, nil); h.Err != ErrNoNode {
			t.Errorf("exists after delete: %v", h.Err)
		}
		if h := c.call(OpGetData, &GetDataRequest{Path: "/rw"}, nil); h.Err != ErrNoNode {
			t.Errorf("getData after delete: %v", h.Err)
		}
	})

	t.Run("null and empty data stay apart", func(t *testing.T) {
		c := newSession(t, addr)
		c.must(OpCreate, &CreateRequest{Path: "/null", ACL: WorldACL(PermAll), Flags: ModeEphemeral}, nil)
		c.must(OpCreate, &CreateRequest{Path: "/empty", Data: []byte{}, ACL: WorldACL(PermAll), Flags: ModeEphemeral}, nil)
		var null, empty GetDataResponse
		c.must(OpGetData, &GetDataRequest{Path: "/null"}, &null)
		c.must(OpGetData, &GetDataRequest{Path: "/empty"}, &empty)
		if null.Data != nil || empty.Data == nil || len(empty.Data) != 0 {
			t.Fatalf("null data read as %#v, empty as %#v", null.Data, empty.Data)
		}
	})

	t.Run("non-ASCII paths", func(t *testing.T) {
		c := newSession(t, addr)
		var cr CreateResponse
		c.must(OpCreate, &CreateRequest{Path: "/é-ü-中", ACL: WorldACL(PermAll), Flags: ModeEphemeral}, &cr)
		var eph GetEphemeralsResponse
		c.must(OpGetEphemerals, &GetEphemeralsRequest{PrefixPath: "/"}, &eph)
		if cr.Path != "/é-ü-中" || !slices.Equal(eph.Ephemerals, []string{"/é-ü-中"}) {
			t.Errorf("created %q, ephemerals %q", cr.Path, eph.Ephemerals)
		}
		if h := c.call(OpCreate, &CreateRequest{Path: "/\U0001F600", ACL: WorldACL(PermAll)}, nil); h.Err != ErrBadArguments {
			t.Errorf("a path outside the Basic Multilingual Plane: %v", h.Err)
		}
	})

	t.Run("create modes and the create family", func(t *testing.T) {
		c := newSession(t, addr)
		var cr CreateResponse
		c.must(OpCreate, &CreateRequest{Path: "/modes", ACL: WorldACL(PermAll)}, &cr)
		if cr.Path != "/modes" {
			t.Fatalf("create reply %+v", cr)
		}
		var seq CreateResponse
		c.must(OpCreate, &CreateRequest{Path: "/modes/s-", ACL: WorldACL(PermAll), Flags: ModePersistentSequential}, &seq)
		if seq.Path != "/modes/s-0000000000" {
			t.Errorf("sequential create: %q", seq.Path)
		}
		var eseq Create2Response
		c.must(OpCreate2, &CreateRequest{Path: "/modes/e-", ACL: WorldACL(PermAll), Flags: ModeEphemeralSequential}, &eseq)
		if eseq.Path != "/modes/e-0000000001" || eseq.Stat.EphemeralOwner != c.session.SessionID {
			t.Errorf("ephemeral sequential create2: %+v", eseq)
		}
		var ctr Create2Response
		c.must(OpCreateContainer, &CreateRequest{Path: "/modes/c", ACL: WorldACL(PermAll), Flags: ModeContainer}, &ctr)
		if ctr.Path != "/modes/c" || ctr.Stat.Czxid == 0 {
			t.Errorf("createContainer: %+v", ctr)
		}
		if h := c.call(OpCreate, &CreateRequest{Path: "/modes", ACL: WorldACL(PermAll)}, nil); h.Err != ErrNodeExists {
			t.Errorf("create of an existing node: %v", h.Err)
		}
		if h := c.call(OpCreate, &CreateRequest{Path: "/modes/e-0000000001/x", ACL: WorldACL(PermAll)}, nil); h.Err != ErrNoChildrenForEphemerals {
			t.Errorf("create under an ephemeral: %v", h.Err)
		}
		// The server parsed the TTL request: it refuses TTL nodes unless
		// started with extended types.
		if h := c.call(OpCreateTTL, &CreateTTLRequest{Path: "/modes/t", ACL: WorldACL(PermAll), Flags: ModePersistentWithTTL, TTL: 60000}, nil); h.Err != ErrUnimplemented {
			t.Errorf("createTTL: %v", h.Err)
		}
	})

	t.Run("children, counts and ephemerals", func(t *testing.T) {
		c := newSession(t, addr)
		c.must(OpCreate, &CreateRequest{Path: "/kids", ACL: WorldACL(PermAll)}, nil)
		for _, n := range []struct {
			path string
			mode CreateMode
		}{{"/kids/a", ModePersistent}, {"/kids/b", ModeEphemeral}, {"/kids/a/x", ModeEphemeral}} {
			c.must(OpCreate, &CreateRequest{Path: n.path, ACL: WorldACL(PermAll), Flags: n.mode}, nil)
		}
		var g2 GetChildren2Response
		c.must(OpGetChildren2, &GetChildren2Request{Path: "/kids"}, &g2)
		slices.Sort(g2.Children)
		if !slices.Equal(g2.Children, []string{"a", "b"}) || g2.Stat.NumChildren != 2 || g2.Stat.Cversion != 2 {
			t.Errorf("getChildren2 %+v", g2)
		}
		var g GetChildrenResponse
		c.must(OpGetChildren, &GetChildrenRequest{Path: "/kids/a"}, &g)
		if !slices.Equal(g.Children, []string{"x"}) {
			t.Errorf("getChildren %+v", g)
		}
		var n GetAllChildrenNumberResponse
		c.must(OpGetAllChildrenNumber, &GetAllChildrenNumberRequest{Path: "/kids"}, &n)
		if n.TotalNumber != 3 {
			t.Errorf("getAllChildrenNumber = %d, want 3", n.TotalNumber)
		}
		var eph GetEphemeralsResponse
		c.must(OpGetEphemerals, &GetEphemeralsRequest{PrefixPath: "/kids"}, &eph)
		slices.Sort(eph.Ephemerals)
		if !slices.Equal(eph.Ephemerals, []string{"/kids/a/x", "/kids/b"}) {
			t.Errorf("getEphemerals %q", eph.Ephemerals)
		}
		var s SyncResponse
		c.must(OpSync, &SyncRequest{Path: "/kids"}, &s)
		if s.Path != "/kids" {
			t.Errorf("sync reply %+v", s)
		}
	})

	t.Run("multi", func(t *testing.T) {
		c := newSession(t, addr)
		var ok MultiResponse
		h := c.must(OpMulti, &MultiRequest{Ops: []MultiOp{
			{Type: OpCreate, Path: "/m", ACL: WorldACL(PermAll)},
			{Type: OpCreate2, Path: "/m/a", Data: []byte("1"), ACL: WorldACL(PermAll)},
			{Type: OpCheck, Path: "/m/a", Version: 0},
			{Type: OpSetData, Path: "/m/a", Data: []byte("2"), Version: 0},
			{Type: OpCreate, Path: "/m/b", ACL: WorldACL(PermAll)},
			{Type: OpDelete, Path: "/m/b", Version: 0},
		}}, &ok)
		types := func(rs []MultiResult) []OpCode {
			var ts []OpCode
			for _, r := range rs {
				ts = append(ts, r.Type)
			}
			return ts
		}
		// Servers before 3.8.4 (ZOOKEEPER-4026) answer a create2 in a
		// multi as a create, without the Stat.
		create2 := OpCreate2
		if len(ok.Results) > 1 && ok.Results[1].Type == OpCreate {
			create2 = OpCreate
		}
		if got := types(ok.Results); !slices.Equal(got, []OpCode{OpCreate, create2, OpCheck, OpSetData, OpCreate, OpDelete}) {
			t.Fatalf("multi result types %v", got)
		}
		r := ok.Results
		if r[0].Path != "/m" || r[1].Path != "/m/a" || r[3].Stat.Version != 1 || r[3].Stat.DataLength != 1 || r[3].Stat.Mzxid != h.Zxid {
			t.Errorf("multi results %+v", r)
		}
		if create2 == OpCreate2 && r[1].Stat.Czxid != h.Zxid {
			t.Errorf("create2 result %+v, multi at zxid %d", r[1], h.Zxid)
		}

		// A failing operation fails them all: the reply header is OK,
		// the results say which failed.
		var failed MultiResponse
		c.must(OpMulti, &MultiRequest{Ops: []MultiOp{
			{Type: OpCreate, Path: "/m/c", ACL: WorldACL(PermAll)},
			{Type: OpCheck, Path: "/m/a", Version: 0},
			{Type: OpDelete, Path: "/m/a", Version: -1},
		}}, &failed)
		want := []MultiResult{{Type: OpError, Err: OK}, {Type: OpError, Err: ErrBadVersion}, {Type: OpError, Err: ErrRuntimeInconsistency}}
		if !reflect.DeepEqual(failed.Results, want) {
			t.Errorf("failed multi results %+v, want %+v", failed.Results, want)
		}
		if h := c.call(OpExists, &ExistsRequest{Path: "/m/c"}, nil); h.Err != ErrNoNode {
			t.Errorf("the failed multi's create was applied: %v", h.Err)
		}

		// multiRead answers each read on its own.
		var rd MultiResponse
		c.must(OpMultiRead, &MultiRequest{Ops: []MultiOp{
			{Type: OpGetData, Path: "/m/a"},
			{Type: OpGetChildren, Path: "/m"},
			{Type: OpGetData, Path: "/m/missing"},
		}}, &rd)
		if r := rd.Results; len(r) != 3 || r[0].Type != OpGetData || string(r[0].Data) != "2" || r[0].Stat.Version != 1 ||
			r[1].Type != OpGetChildren || !slices.Equal(r[1].Children, []string{"a"}) ||
			r[2].Type != OpError || r[2].Err != ErrNoNode {
			t.Errorf("multiRead results %+v", r)
		}
	})

	t.Run("watches: one-time, persistent, check and remove", func(t *testing.T) {
		c := newSession(t, addr)
		other := newSession(t, addr)
		c.must(OpCreate, &CreateRequest{Path: "/w", ACL: WorldACL(PermAll)}, nil)

		// A data watch fires once, for another session's change.
		c.must(OpGetData, &GetDataRequest{Path: "/w", Watch: true}, &GetDataResponse{})
		c.must(OpCheckWatches, &CheckWatchesRequest{Path: "/w", Type: WatcherData}, nil)
		h := other.must(OpSetData, &SetDataRequest{Path: "/w", Data: []byte("x"), Version: -1}, nil)
		n := c.event()
		if n.Event != (WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/w"}) {
			t.Errorf("data watch event %+v", n)
		}
		if n.Zxid != -1 && n.Zxid != h.Zxid { // 3.8 sends -1, later servers the change's zxid
			t.Errorf("event zxid %d, change at %d", n.Zxid, h.Zxid)
		}
		if h := c.call(OpCheckWatches, &CheckWatchesRequest{Path: "/w", Type: WatcherData}, nil); h.Err != ErrNoWatcher {
			t.Errorf("checkWatches after the watch fired: %v", h.Err)
		}

		// A child watch fires for a new child.
		c.must(OpGetChildren, &GetChildrenRequest{Path: "/w", Watch: true}, &GetChildrenResponse{})
		other.must(OpCreate, &CreateRequest{Path: "/w/kid", ACL: WorldACL(PermAll), Flags: ModeEphemeral}, nil)
		if got := c.event().Event; got != (WatcherEvent{Type: EventNodeChildrenChanged, State: StateSyncConnected, Path: "/w"}) {
			t.Errorf("child watch event %+v", got)
		}
		other.must(OpDelete, &DeleteRequest{Path: "/w/kid", Version: -1}, nil)

		// An exists watch on a missing node, then removed.
		if h := c.call(OpExists, &ExistsRequest{Path: "/w/gone", Watch: true}, nil); h.Err != ErrNoNode {
			t.Fatalf("exists: %v", h.Err)
		}
		c.must(OpRemoveWatches, &RemoveWatchesRequest{Path: "/w/gone", Type: WatcherAny}, nil)
		if h := c.call(OpRemoveWatches, &RemoveWatchesRequest{Path: "/w/gone", Type: WatcherAny}, nil); h.Err != ErrNoWatcher {
			t.Errorf("removing a removed watch: %v", h.Err)
		}

		// A persistent recursive watch sees every change below, and
		// stays.
		c.must(OpAddWatch, &AddWatchRequest{Path: "/w", Mode: AddWatchPersistentRecursive}, &ErrorResponse{})
		other.must(OpCreate, &CreateRequest{Path: "/w/a", ACL: WorldACL(PermAll)}, nil)
		other.must(OpCreate, &CreateRequest{Path: "/w/a/b", ACL: WorldACL(PermAll)}, nil)
		other.must(OpDelete, &DeleteRequest{Path: "/w/a/b", Version: -1}, nil)
		for _, want := range []WatcherEvent{
			{Type: EventNodeCreated, State: StateSyncConnected, Path: "/w/a"},
			{Type: EventNodeCreated, State: StateSyncConnected, Path: "/w/a/b"},
			{Type: EventNodeDeleted, State: StateSyncConnected, Path: "/w/a/b"},
		} {
			if got := c.event().Event; got != want {
				t.Errorf("recursive watch event %+v, want %+v", got, want)
			}
		}
		c.must(OpCheckWatches, &CheckWatchesRequest{Path: "/w", Type: WatcherAny}, nil)
	})

	t.Run("setWatches2 re-arms watches on a new connection", func(t *testing.T) {
		c := newSession(t, addr)
		other := newSession(t, addr)
		h := c.must(OpCreate, &CreateRequest{Path: "/re", ACL: WorldACL(PermAll)}, nil)
		seen := h.Zxid
		other.must(OpSetData, &SetDataRequest{Path: "/re", Data: []byte("changed"), Version: -1}, nil)

		// Attach to the session on a second connection, as after a
		// disconnect, and re-arm a data watch and a persistent one as of
		// the last zxid seen: the data watch fires at once, since /re
		// changed after it.
		re, err := dialSession(t, addr, ConnectRequest{LastZxidSeen: seen, TimeOut: 10000, SessionID: c.session.SessionID, Passwd: c.session.Passwd})
		if err != nil {
			t.Fatal(err)
		}
		if re.session.SessionID != c.session.SessionID {
			t.Fatalf("reattached to session %x, want %x", re.session.SessionID, c.session.SessionID)
		}
		re.send(XidSetWatches, OpSetWatches2, &SetWatches2{SetWatches: SetWatches{RelativeZxid: seen, DataWatches: []string{"/re"}}, PersistentWatches: []string{"/re"}})
		if h := re.reply(XidSetWatches, nil); h.Err != OK {
			t.Fatalf("setWatches2: %v", h.Err)
		}
		if got := re.event().Event; got != (WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/re"}) {
			t.Errorf("re-armed data watch event %+v", got)
		}
		// The persistent watch stays armed.
		other.must(OpDelete, &DeleteRequest{Path: "/re", Version: -1}, nil)
		if got := re.event().Event; got != (WatcherEvent{Type: EventNodeDeleted, State: StateSyncConnected, Path: "/re"}) {
			t.Errorf("re-armed persistent watch event %+v", got)
		}
		re.must(OpCheckWatches, &CheckWatchesRequest{Path: "/re", Type: WatcherAny}, nil)
	})

	t.Run("auth, whoAmI and ACLs", func(t *testing.T) {
		c := newSession(t, addr)
		var who WhoAmIResponse
		c.must(OpWhoAmI, nil, &who)
		if !reflect.DeepEqual(who.ClientInfo, []ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}}) {
			t.Errorf("whoAmI before auth %+v", who.ClientInfo)
		}
		c.send(XidAuth, OpAuth, &AuthPacket{Scheme: "digest", Auth: []byte("alice:secret")})
		if h := c.reply(XidAuth, nil); h.Err != OK {
			t.Fatalf("auth: %v", h.Err)
		}
		c.must(OpWhoAmI, nil, &who)
		if !slices.Contains(who.ClientInfo, ClientInfo{AuthScheme: "digest", User: "alice"}) {
			t.Errorf("whoAmI after auth %+v", who.ClientInfo)
		}

		// A node only its creator may touch.
		creator := []ACL{{Perms: PermAll, ID: ID{Scheme: "auth"}}}
		c.must(OpCreate, &CreateRequest{Path: "/acl", Data: []byte("s"), ACL: creator}, nil)
		var ga GetACLResponse
		c.must(OpGetACL, &GetACLRequest{Path: "/acl"}, &ga)
		if len(ga.ACL) != 1 || ga.ACL[0].Perms != PermAll || ga.ACL[0].ID.Scheme != "digest" ||
			!bytes.HasPrefix([]byte(ga.ACL[0].ID.ID), []byte("alice:")) || ga.Stat.Aversion != 0 {
			t.Fatalf("getACL %+v", ga)
		}
		stranger := newSession(t, addr)
		if h := stranger.call(OpGetData, &GetDataRequest{Path: "/acl"}, nil); h.Err != ErrNoAuth {
			t.Errorf("getData without auth: %v", h.Err)
		}
		var sa SetACLResponse
		c.must(OpSetACL, &SetACLRequest{Path: "/acl", ACL: append(ga.ACL, WorldACL(PermRead)...), Version: 0}, &sa)
		if sa.Stat.Aversion != 1 {
			t.Errorf("setACL Stat %+v", sa.Stat)
		}
		stranger.must(OpGetData, &GetDataRequest{Path: "/acl"}, &GetDataResponse{})
		if h := c.call(OpSetACL, &SetACLRequest{Path: "/acl", ACL: WorldACL(PermAll), Version: 0}, nil); h.Err != ErrBadVersion {
			t.Errorf("setACL with a stale version: %v", h.Err)
		}

		// Bad credentials end the connection after the AuthFailed reply.
		bad := newSession(t, addr)
		bad.send(XidAuth, OpAuth, &AuthPacket{Scheme: "no-such-scheme", Auth: []byte("x")})
		if h := bad.reply(XidAuth, nil); h.Err != ErrAuthFailed {
			t.Errorf("auth with an unknown scheme: %v", h.Err)
		}
	})

	t.Run("the largest node fits the frame limits", func(t *testing.T) {
		c := newSession(t, addr)
		// The create frame is the header (8 bytes), the path, the data,
		// the world ACL and the flags: make it exactly MaxBuffer long.
		acl := WorldACL(PermAll)
		overhead := len(Marshal(nil, &RequestHeader{}, &CreateRequest{Path: "/big", Data: []byte{}, ACL: acl}))
		data := bytes.Repeat([]byte{'z'}, MaxBuffer-overhead)
		c.must(OpCreate, &CreateRequest{Path: "/big", Data: data, ACL: acl, Flags: ModeEphemeral}, nil)
		var gd GetDataResponse
		c.must(OpGetData, &GetDataRequest{Path: "/big"}, &gd)
		if !bytes.Equal(gd.Data, data) {
			t.Fatalf("read back %d bytes, wrote %d", len(gd.Data), len(data))
		}

		// One byte more is refused before it is written; sent anyway,
		// the server closes the connection.
		tooBig := &CreateRequest{Path: "/bix", Data: append(data, 'z'), ACL: acl}
		if err := c.w.WriteFrame(&RequestHeader{Xid: 99, Type: OpCreate}, tooBig); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("writing a frame above MaxBuffer: %v", err)
		}
		raw, err := AppendFrame(nil, MaxBuffer+1, &RequestHeader{Xid: 99, Type: OpCreate}, tooBig)
		if err != nil {
			t.Fatal(err)
		}
		c.nc.SetDeadline(time.Now().Add(ioTimeout))
		if _, err := c.nc.Write(raw); err != nil {
			t.Fatal(err)
		}
		if _, err := c.r.ReadFrame(); err == nil {
			t.Fatal("the server answered a frame above its jute.maxbuffer")
		}
	})

	t.Run("sasl on a server without it", func(t *testing.T) {
		// A server without SASL answers a token with OK and a null
		// token (no challenge), and the connection goes on.
		c := newSession(t, addr)
		r := SetSASLResponse{Token: []byte("unset")}
		c.must(OpSASL, &GetSASLRequest{Token: []byte("token")}, &r)
		if r.Token != nil {
			t.Errorf("server token %q, want null", r.Token)
		}
		c.must(OpExists, &ExistsRequest{Path: "/"}, &ExistsResponse{})
	})

	t.Run("reconfig is refused by a server without it", func(t *testing.T) {
		c := newSession(t, addr)
		h := c.call(OpReconfig, &ReconfigRequest{LeavingServers: "2", CurConfigID: -1}, nil)
		if h.Err != ErrReconfigDisabled {
			t.Errorf("reconfig: %v", h.Err)
		}
	})
}
