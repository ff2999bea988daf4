package zkcoord

import "testing"

// What a lost write's outcome is, from the node found afterwards. Equal
// data alone never proves a write happened.
func TestSettleDecidesOnlyWhatIsExact(t *testing.T) {
	const self, other = 7, 8
	mine, theirs := []byte("6"), []byte("7")
	at := func(version int32, czxid int64) *Stat { return &Stat{Version: version, Czxid: czxid} }
	eph := func(owner int64) *Stat { return &Stat{EphemeralOwner: owner} }
	set := Write{Kind: WriteSet, Data: mine, Version: 4, Czxid: 100}
	setNoCzxid := Write{Kind: WriteSet, Data: mine, Version: 4}
	sole := Write{Kind: WriteSet, Data: mine, Version: 4, Czxid: 100, Sole: true}
	create := Write{Kind: WriteCreate, Data: mine}
	createEph := Write{Kind: WriteCreate, Data: mine, Flags: FlagEphemeral}
	del := Write{Kind: WriteDelete, Version: 4, Czxid: 100}
	for _, c := range []struct {
		name string
		w    Write
		data []byte
		st   *Stat
		want settled
	}{
		{"set: still at the version expected", set, theirs, at(4, 100), settledNotDone},
		{"set: next version holds other data", set, theirs, at(5, 100), settledNotDone},
		{"set: next version holds the same data", set, mine, at(5, 100), settledUnknown},
		{"set: same data, czxid not known", setNoCzxid, mine, at(5, 100), settledUnknown},
		{"set: later version", set, theirs, at(6, 100), settledUnknown},
		{"set: node gone", set, nil, nil, settledUnknown},
		{"set: node created again", set, theirs, at(4, 200), settledUnknown},
		{"set: any version", Write{Kind: WriteSet, Data: mine, Version: -1}, theirs, at(4, 100), settledUnknown},
		{"set: sole writer, next version holds the data", sole, mine, at(5, 100), settledDone},
		{"set: sole writer, next version holds other data", sole, theirs, at(5, 100), settledNotDone},
		{"create: no node", create, nil, nil, settledNotDone},
		{"create: other data at version 0", create, theirs, at(0, 100), settledNotDone},
		{"create: same data at version 0", create, mine, at(0, 100), settledUnknown},
		{"create: changed since", create, theirs, at(1, 100), settledUnknown},
		{"create ephemeral: ours", createEph, mine, eph(self), settledDone},
		{"create ephemeral: another session's", createEph, mine, eph(other), settledNotDone},
		{"create ephemeral: no node", createEph, nil, nil, settledNotDone},
		{"delete: node gone", del, nil, nil, settledDone},
		{"delete: node created again", del, nil, at(0, 200), settledDone},
		{"delete: node still there", del, nil, at(4, 100), settledNotDone},
	} {
		if got, why := settle(c.w, c.data, c.st, self); got != c.want {
			t.Errorf("%s: settled %d (%s); want %d", c.name, got, why, c.want)
		}
	}
}
