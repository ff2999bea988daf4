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
		want verdict
	}{
		{"set: still at the version expected", set, theirs, at(4, 100), verdictNotDone},
		{"set: next version holds other data", set, theirs, at(5, 100), verdictNotDone},
		{"set: next version holds the same data", set, mine, at(5, 100), verdictUnknown},
		{"set: same data, czxid not known", setNoCzxid, mine, at(5, 100), verdictUnknown},
		{"set: later version", set, theirs, at(6, 100), verdictUnknown},
		{"set: node gone", set, nil, nil, verdictUnknown},
		{"set: node created again", set, theirs, at(4, 200), verdictUnknown},
		{"set: any version", Write{Kind: WriteSet, Data: mine, Version: -1}, theirs, at(4, 100), verdictUnknown},
		{"set: sole writer, next version holds the data", sole, mine, at(5, 100), verdictDone},
		{"set: sole writer, next version holds other data", sole, theirs, at(5, 100), verdictNotDone},
		{"create: no node", create, nil, nil, verdictNotDone},
		{"create: other data at version 0", create, theirs, at(0, 100), verdictNotDone},
		{"create: same data at version 0", create, mine, at(0, 100), verdictUnknown},
		{"create: changed since", create, theirs, at(1, 100), verdictUnknown},
		{"create ephemeral: ours", createEph, mine, eph(self), verdictDone},
		{"create ephemeral: another session's", createEph, mine, eph(other), verdictNotDone},
		{"create ephemeral: no node", createEph, nil, nil, verdictNotDone},
		{"delete: node gone", del, nil, nil, verdictDone},
		{"delete: node created again", del, nil, at(0, 200), verdictDone},
		{"delete: node still there", del, nil, at(4, 100), verdictNotDone},
	} {
		if got, why := settle(c.w, c.data, c.st, self); got != c.want {
			t.Errorf("%s: settled %d (%s); want %d", c.name, got, why, c.want)
		}
	}
}
