package console

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
)

// readMembership reads a group of the group package: its members are the
// ephemeral children of its node (persistent ones are not members), each
// named by its id, protected or not; sorted by id as group.Members sorts
// them.
func (m *model) readMembership(p string) (*MembershipView, error) {
	kids, err := m.store.children(p)
	if err != nil {
		return nil, err
	}
	g := &MembershipView{Members: []GroupMember{}}
	err = m.eachNode(p, kids, func(k string, data []byte, st *zkcoord.Stat) {
		if st.EphemeralOwner == 0 {
			return
		}
		mb := GroupMember{Node: k, ID: zkcoord.StripProtected(k), Session: session(st), Token: st.Czxid,
			Since: time.UnixMilli(st.Ctime).UTC()}
		if len(data) > 0 {
			mb.Data = summary(data)
		}
		g.Members = append(g.Members, mb)
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(g.Members, func(a, b GroupMember) int {
		return cmp.Or(strings.Compare(a.ID, b.ID), strings.Compare(a.Node, b.Node))
	})
	return g, nil
}
