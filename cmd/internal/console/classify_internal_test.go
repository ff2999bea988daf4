package console

import (
	"slices"
	"strings"
	"testing"
)

const (
	u1 = "_c_0f8fad5b-d9cb-469f-a165-70867728950e-"
	u2 = "_c_7c9e6679-7425-40de-944b-e07fc1f90ae7-"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		kids []string
		want Kind
	}{
		{[]string{"clients", "resources", "barriers", "handovers", "term", "status", "stopped"}, KindGroup},
		{[]string{"clients", "resources"}, ""},
		{[]string{"locks", "leases"}, KindSemaphore},
		{[]string{u1 + "latch-0000000003"}, KindElection},
		{[]string{u1 + "lock-0000000001", u2 + "lock-0000000000"}, KindMutex},
		{[]string{u1 + "__READ__0000000001", u2 + "__WRIT__0000000000"}, KindRWLock},
		{[]string{u1 + "queue-0000000007", "claims"}, KindQueue},
		{[]string{u1 + "queue-005-0000000007"}, KindQueue},
		{[]string{"8d3c2b1a-0b7e-4c38-9f7e-2a1d5c6b7e8f", "ready"}, KindDoubleBarrier},
		{[]string{u1 + "worker-7", u2 + "worker-8"}, KindMembership},
		{[]string{"8d3c2b1a-0b7e-4c38-9f7e-2a1d5c6b7e8f", u1 + "worker-7"}, KindDoubleBarrier},
		{[]string{"lock-0000000001"}, ""}, // not protected: not a zkcoord or Curator lock
		{[]string{"config", "app"}, ""},
		{nil, ""},
	} {
		if got := classify(tc.kids); got != tc.want {
			t.Errorf("classify(%v) = %q, want %q", tc.kids, got, tc.want)
		}
	}
}

func TestOrdered(t *testing.T) {
	kids := []string{u1 + "lock-0000000010", "foreign", u2 + "lock-0000000002", u1 + "__WRIT__0000000001", u2 + "__READ__0000000000"}
	if got, want := ordered(kids, lockMarker), []string{u2 + "lock-0000000002", u1 + "lock-0000000010"}; !slices.Equal(got, want) {
		t.Errorf("locks %v, want %v", got, want)
	}
	if got, want := ordered(kids, readMarker, writeMarker), []string{u2 + "__READ__0000000000", u1 + "__WRIT__0000000001"}; !slices.Equal(got, want) {
		t.Errorf("read/write %v, want %v", got, want)
	}
}

func TestTimelineChanges(t *testing.T) {
	lead := func(id, node string) *View {
		return &View{Kind: KindElection, Election: &ElectionView{Leader: &Contender{ID: id, Node: node}, Acting: true, Term: 2}}
	}
	if got := changes(lead("a", "n1"), lead("b", "n2")); len(got) != 1 || got[0] != "leader: b (session , token 0)" {
		t.Errorf("leader change: %q", got)
	}
	if got := changes(lead("a", "n1"), lead("a", "n1")); got != nil {
		t.Errorf("no change: %q", got)
	}
	group := func(gen int64, alloc map[string][]string) *View {
		return &View{Kind: KindGroup, Group: &GroupView{Generation: gen, Allocation: alloc}}
	}
	got := changes(group(1, map[string][]string{"c1": {"r1", "r2"}}), group(2, map[string][]string{"c1": {"r1"}, "c2": {"r2"}}))
	if !slices.Contains(got, "rebalanced: generation 2, 1 moved: r2 c1→c2") {
		t.Errorf("rebalancing: %q", got)
	}
	// Members go by their names where they have one.
	named := group(2, map[string][]string{"c1": {"r1"}, "c2": {"r2"}})
	named.Group.Members = []Member{{ID: "c1", Name: "alpha"}, {ID: "c2"}}
	named.Group.Coordinator = "c1"
	got = changes(group(1, map[string][]string{"c1": {"r1", "r2"}}), named)
	for _, want := range []string{"member alpha joined", "member c2 joined", "coordinator: alpha", "rebalanced: generation 2, 1 moved: r2 alpha→c2"} {
		if !slices.Contains(got, want) {
			t.Errorf("named members: %q lacks %q", got, want)
		}
	}
}

func TestInstanceOf(t *testing.T) {
	const curator = `{"name":"billing","id":"8d3c2b1a-0b7e-4c38-9f7e-2a1d5c6b7e8f","address":"10.0.0.1","port":8080,` +
		`"sslPort":null,"payload":null,"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":null}`
	for _, tc := range []struct {
		name, data string
		want       bool
	}{
		{"billing", curator, true},
		{"orders", curator, false}, // another service's instance
		{"billing", `{"name":"billing","id":"x","address":null,"port":null,"registrationTimeUTC":0}`, true},
		{"billing", `{"name":"billing","id":"x"}`, false}, // not written by a discovery service
		{"billing", `{"name":"billing","id":"","address":"a","port":1,"registrationTimeUTC":1}`, false},
		{"billing", ``, false}, // a double barrier's member
		{"billing", `[1,2]`, false},
	} {
		if got := instanceOf(tc.name, []byte(tc.data)); got != tc.want {
			t.Errorf("instanceOf(%q, %s) = %v, want %v", tc.name, tc.data, got, tc.want)
		}
	}
}

func TestSummary(t *testing.T) {
	long := strings.Repeat("é", 100)
	for _, tc := range []struct{ in, want string }{
		{`{ "zone": "eu-1" }`, `{"zone":"eu-1"}`},
		{"host-a:7000", "host-a:7000"},
		{"\x00\x01\x02", "<3 bytes>"},
		{long, long[:maxSummary] + "…"},
	} {
		if got := summary([]byte(tc.in)); got != tc.want {
			t.Errorf("summary(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestServiceAndMembershipChanges(t *testing.T) {
	svc := func(ins ...Instance) *View { return &View{Kind: KindService, Service: &ServiceView{Instances: ins}} }
	a := Instance{Node: "a", ID: "a", Address: "10.0.0.1", Port: 80}
	b := Instance{Node: "b", ID: "b", Address: "10.0.0.2", Port: 80, SSLPort: 443}
	off := a
	off.Disabled = true
	got := changes(svc(a), svc(a, b))
	if !slices.Equal(got, []string{"instance b registered at 10.0.0.2:80 (ssl 443)"}) {
		t.Errorf("registered: %q", got)
	}
	if got := changes(svc(a, b), svc(off)); !slices.Equal(got, []string{"instance a disabled", "instance b unregistered"}) {
		t.Errorf("disabled, unregistered: %q", got)
	}
	grp := func(ids ...string) *View {
		g := &MembershipView{}
		for _, id := range ids {
			g.Members = append(g.Members, GroupMember{Node: u1 + id, ID: id, Session: "0x1"})
		}
		return &View{Kind: KindMembership, Membership: g}
	}
	if got := changes(grp("x"), grp("y")); !slices.Equal(got, []string{"member y joined (session 0x1)", "member x left"}) {
		t.Errorf("members: %q", got)
	}
}
