package election_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

const long = 60 * time.Second

// recorder collects the events of candidates. Its channel has room for
// every event a test causes, so none is dropped after a candidate ended.
type recorder struct {
	mu     sync.Mutex
	ch     chan election.Event // the events not yet read into events
	events []election.Event
}

func newRecorder() *recorder { return &recorder{ch: make(chan election.Event, 1<<14)} }

// read moves the events sent so far into r.events; r.mu is held.
func (r *recorder) read() {
	for len(r.ch) > 0 {
		r.events = append(r.events, <-r.ch)
	}
}

func (r *recorder) count(match func(election.Event) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read()
	n := 0
	for _, ev := range r.events {
		if match(ev) {
			n++
		}
	}
	return n
}

func (r *recorder) types(node string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read()
	var out []string
	for _, ev := range r.events {
		if ev.Node == node || (node != "" && ev.Node == "" && ev.Type == election.EventOffer) {
			out = append(out, ev.Type.String())
		}
	}
	return out
}

func notified(ev election.Event) bool { return ev.Type == election.EventDetermine && ev.Notified }

func newElection(t testing.TB, sess *zkcoord.Session, path string, opts ...election.Option) *election.Election {
	t.Helper()
	e, err := election.New(sess, path, opts...)
	if err != nil {
		t.Fatalf("election.New: %v", err)
	}
	return e
}

func TestSingleCandidate(t *testing.T) {
	ctx := testCtx(t, long)
	sess := connect(t, shared.Servers())
	path := uniquePath(t)
	rec := newRecorder()
	e := newElection(t, sess, path, election.WithID("solo"), election.WithEvents(rec.ch))

	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatalf("Campaign: %v", err)
	}
	if l.Token() <= 0 || l.Term() < 1 || l.ID() != "solo" {
		t.Fatalf("token %d term %d id %q", l.Token(), l.Term(), l.ID())
	}
	if !strings.HasPrefix(zkcoord.Base(l.Node()), "_c_") || !strings.Contains(l.Node(), "-latch-") {
		t.Fatalf("node %s does not have Curator's LeaderLatch form", l.Node())
	}
	data, st, err := sess.Get(ctx, l.Node())
	if err != nil || string(data) != "solo" || st.EphemeralOwner != sess.ID() || st.Czxid != l.Token() {
		t.Fatalf("node data %q owner 0x%x czxid %d err %v", data, st.EphemeralOwner, st.Czxid, err)
	}
	who, err := e.Leader(ctx)
	if err != nil {
		t.Fatalf("Leader: %v", err)
	}
	want := election.Leader{ID: "solo", Node: l.Node(), Token: l.Token(), Session: sess.ID(), Acting: true, Term: l.Term()}
	if who != want {
		t.Fatalf("Leader = %+v, want %+v", who, want)
	}
	if closed(l.Done()) || l.Err() != nil || l.Context().Err() != nil {
		t.Fatalf("leadership ended early: %v", l.Err())
	}
	// A guarded write succeeds while leading.
	if _, err := sess.GuardedMulti(ctx, l.Fence(), zkcoord.CreateOp(path+"-work", []byte("x"), 0)); err != nil {
		t.Fatalf("guarded write while leading: %v", err)
	}

	if err := l.Resign(ctx); err != nil {
		t.Fatalf("Resign: %v", err)
	}
	if !closed(l.Done()) || !errors.Is(l.Err(), election.ErrResigned) || !errors.Is(context.Cause(l.Context()), election.ErrResigned) {
		t.Fatalf("after Resign: done %v err %v", closed(l.Done()), l.Err())
	}
	if ok, _, _ := sess.Exists(ctx, l.Node()); ok {
		t.Fatalf("node %s still exists after Resign", l.Node())
	}
	if ok, _, _ := sess.Exists(ctx, e.LeaderPath()); ok {
		t.Fatalf("leader node still exists after Resign")
	}
	if _, err := sess.GuardedMulti(ctx, l.Fence(), zkcoord.SetOp(path+"-work", []byte("y"), -1)); !errors.Is(err, zkcoord.ErrNotOwner) {
		t.Fatalf("guarded write after Resign: %v, want ErrNotOwner", err)
	}
	if _, err := e.Leader(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("Leader after Resign: %v, want ErrNoLeader", err)
	}
	// Resign again: nothing left to do.
	if err := l.Resign(ctx); err != nil {
		t.Fatalf("second Resign: %v", err)
	}
	got := strings.Join(rec.types(l.Node()), ",")
	if got != "offer,offered,determine,elected,lost,resigned" {
		t.Fatalf("events %s", got)
	}
	if n := rec.count(func(ev election.Event) bool { return ev.Type == election.EventOffer }); n != 1 {
		t.Fatalf("%d offer events", n)
	}
}

func TestInvalidInput(t *testing.T) {
	sess := connect(t, shared.Servers())
	for _, tc := range []struct {
		path string
		opts []election.Option
	}{
		{"", nil},
		{"relative", nil},
		{"/", nil},
		{"/a/", nil},
		{"/a", []election.Option{election.WithID("")}},
		{"/a", []election.Option{election.WithID(strings.Repeat("x", election.MaxIDLen+1))}},
		{"/a", []election.Option{election.WithID("\xff")}},
		{"/a", []election.Option{election.WithTermPath("/a/term")}},
		{"/a", []election.Option{election.WithLeaderPath("/a")}},
		{"/a", []election.Option{election.WithTermPath("/x"), election.WithLeaderPath("/x")}},
	} {
		if _, err := election.New(sess, tc.path, tc.opts...); err == nil {
			t.Errorf("New(%q, %d options) succeeded", tc.path, len(tc.opts))
		}
	}
	if _, err := election.New(nil, "/a"); err == nil {
		t.Errorf("New with nil Session succeeded")
	}
}

// TestFollowersWatchOnlyTheirPredecessor checks the order of ten
// candidates on two Sessions, that each watches its predecessor, and that
// every leader change notifies exactly one candidate.
func TestFollowersWatchOnlyTheirPredecessor(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	rec := newRecorder()
	sessions := []*zkcoord.Session{connect(t, shared.Servers()), connect(t, shared.Servers())}
	var cands []*election.Candidate
	for i := 0; i < 10; i++ {
		e := newElection(t, sessions[i%2], path, election.WithID(fmt.Sprintf("c%d", i)), election.WithEvents(rec.ch))
		c, err := e.Nominate(ctx)
		if err != nil {
			t.Fatalf("Nominate %d: %v", i, err)
		}
		cands = append(cands, c)
		want := election.Following
		if i == 0 {
			want = election.Leading
		}
		if c.Role() != want {
			t.Fatalf("candidate %d: role %v, want %v", i, c.Role(), want)
		}
		if i > 0 {
			st := c.State()
			if st.Following != cands[i-1].Node() || st.FollowingID != fmt.Sprintf("c%d", i-1) {
				t.Fatalf("candidate %d follows %s (%s), want %s", i, st.Following, st.FollowingID, cands[i-1].Node())
			}
		}
	}
	checkWatches(t, ctx, path, cands)

	for i := 0; i < len(cands)-1; i++ {
		before := rec.count(notified)
		if err := cands[i].Resign(ctx); err != nil {
			t.Fatalf("Resign %d: %v", i, err)
		}
		select {
		case <-cands[i+1].Elected():
		case <-time.After(long):
			t.Fatalf("candidate %d not elected after %d resigned", i+1, i)
		}
		if n := rec.count(notified) - before; n != 1 {
			t.Fatalf("leader change %d notified %d candidates, want 1", i, n)
		}
		who, err := cands[i+1].Leadership(), error(nil)
		if who == nil || who.Term() <= int64(i) {
			t.Fatalf("leader %d: leadership %v err %v", i+1, who, err)
		}
	}
	if err := cands[9].Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rec.count(notified); n != 9 {
		t.Fatalf("%d notifications for 9 leader changes", n)
	}
}

// checkWatches asks the server which watches it holds on participant
// nodes: every node but the last is watched by exactly one session (its
// successor's), except the leader's, which its own session watches too.
func checkWatches(t *testing.T, ctx context.Context, path string, cands []*election.Candidate) {
	t.Helper()
	var got map[string]int
	ok := func() bool {
		w, err := shared.Server(0).Wchc(ctx)
		if err != nil {
			return false
		}
		got = map[string]int{}
		for _, paths := range w {
			for _, p := range paths {
				if strings.HasPrefix(p, path+"/") {
					got[p]++
				}
			}
		}
		if len(got) != len(cands)-1 {
			return false
		}
		for i, c := range cands[:len(cands)-1] {
			if n := got[c.Node()]; n < 1 || n > 1 && !(i == 0 && n == 2) {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("watches on participants: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHundredCandidates runs 100 candidates on 5 Sessions.
func TestHundredCandidates(t *testing.T) {
	ctx := testCtx(t, 2*long)
	path := uniquePath(t)
	rec := newRecorder()
	var sessions []*zkcoord.Session
	for i := 0; i < 5; i++ {
		sessions = append(sessions, connect(t, shared.Servers()))
	}
	cands := make([]*election.Candidate, 100)
	var wg sync.WaitGroup
	errs := make(chan error, len(cands))
	for i := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := election.New(sessions[i%len(sessions)], path, election.WithID(fmt.Sprintf("c%03d", i)), election.WithEvents(rec.ch))
			if err == nil {
				cands[i], err = e.Nominate(ctx)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Nominate: %v", err)
	}
	leaders := func() []*election.Candidate {
		var out []*election.Candidate
		for _, c := range cands {
			if c.Role() == election.Leading {
				out = append(out, c)
			}
		}
		return out
	}
	testkit.Eventually(t, long, "one leader", func() bool { return len(leaders()) == 1 })
	e := newElection(t, sessions[0], path)
	for change := 0; change < 5; change++ {
		l := leaders()
		if len(l) != 1 {
			t.Fatalf("%d leaders", len(l))
		}
		who, err := e.Leader(ctx)
		if err != nil || who.Node != l[0].Node() {
			t.Fatalf("Leader %+v (%v), candidate %s leads", who, err, l[0].Node())
		}
		before := rec.count(notified)
		if err := l[0].Resign(ctx); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, long, "next leader", func() bool { return len(leaders()) == 1 })
		if n := rec.count(notified) - before; n != 1 {
			t.Fatalf("leader change %d notified %d candidates, want 1", change, n)
		}
	}
	// End the election: every candidate is told.
	if err := e.End(ctx); err != nil {
		t.Fatalf("End: %v", err)
	}
	for i, c := range cands {
		select {
		case <-c.Done():
		case <-time.After(long):
			t.Fatalf("candidate %d not finished after End", i)
		}
		if err := c.Err(); !errors.Is(err, election.ErrEnded) && !errors.Is(err, election.ErrResigned) {
			t.Fatalf("candidate %d finished with %v", i, err)
		}
	}
}

// TestNotificationRereadsChildren: a follower that is notified must read
// every participant again. Here a node with a wrapped sequence number
// appears while A leads (A does not watch for it, it watches its term);
// when A resigns, B must see the wrapped node, which now sorts first, and
// refuse to lead (ErrSequenceWrapped), instead of concluding from a cached
// list that it leads.
func TestNotificationRereadsChildren(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	other := connect(t, shared.Servers())
	a, err := newElection(t, sess, path, election.WithID("a")).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newElection(t, sess, path, election.WithID("b")).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := path + "/_c_2f0ca1d0-96a3-4f0e-8a51-6a0d3b3f7c11-latch--2147483648"
	if _, err := other.Create(ctx, wrapped, []byte("wrapped"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, b.Done(), long, "b finished")
	if b.Leadership() != nil {
		t.Fatal("b led beside the wrapped node")
	}
	checkWrapped(t, b.Err(), path, wrapped)
	checkParticipants(t, other, path, wrapped)
	who, err := newElection(t, other, path).Leader(ctx)
	if err != nil || who.ID != "wrapped" || who.Acting {
		t.Fatalf("Leader = %+v, %v", who, err)
	}
}

// TestSessionCloseRemovesSeveralAtOnce: three candidates go in one
// transaction (their Session closes); the fourth, notified once about its
// predecessor, must find that it now leads.
func TestSessionCloseRemovesSeveralAtOnce(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	s1 := connect(t, shared.Servers())
	s2 := connect(t, shared.Servers())
	rec := newRecorder()
	e1 := newElection(t, s1, path, election.WithEvents(rec.ch))
	var first []*election.Candidate
	for i := 0; i < 3; i++ {
		c, err := e1.Nominate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, c)
	}
	d, err := newElection(t, s2, path, election.WithID("d"), election.WithEvents(rec.ch)).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.State().Following != first[2].Node() {
		t.Fatalf("d follows %s", d.State().Following)
	}
	if err := s1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, d.Elected(), long, "d elected")
	for _, c := range first {
		<-c.Done()
		if !errors.Is(c.Err(), election.ErrLost) || !errors.Is(c.Err(), zkcoord.ErrSessionClosed) {
			t.Fatalf("candidate on closed Session: %v", c.Err())
		}
	}
	if n := rec.count(func(ev election.Event) bool { return notified(ev) && ev.Node == d.Node() }); n != 1 {
		t.Fatalf("d was notified %d times", n)
	}
	d.Resign(ctx)
}

func TestTermBumpDeposesLeader(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	rec := newRecorder()
	e := newElection(t, sess, path, election.WithEvents(rec.ch))
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	follower, err := e.Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else takes the term, as a second leader would.
	if _, err := sess.Set(ctx, e.TermPath(), []byte(`{"id":"usurper","node":"/x"}`), -1); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, l.Done(), long, "deposed leader's Done")
	if !errors.Is(l.Err(), election.ErrDeposed) {
		t.Fatalf("Err = %v as Done closed", l.Err())
	}
	// Once the candidate finished, Err names the new term's holder.
	waitClosed(t, l.Candidate().Done(), long, "deposed candidate finished")
	if !errors.Is(l.Err(), election.ErrDeposed) || !strings.Contains(l.Err().Error(), "usurper") {
		t.Fatalf("Err = %v", l.Err())
	}
	// The deposed leader steps aside: its node is deleted and the next
	// candidate leads, in a newer term.
	waitClosed(t, follower.Elected(), long, "follower elected")
	if follower.Leadership().Term() <= l.Term()+1 {
		t.Fatalf("terms %d then %d", l.Term(), follower.Leadership().Term())
	}
	if follower.Leadership().Token() <= l.Token() {
		t.Fatalf("tokens %d then %d", l.Token(), follower.Leadership().Token())
	}
	if err := l.Resign(ctx); err != nil {
		t.Fatalf("Resign after deposition: %v", err)
	}
	if !errors.Is(l.Candidate().Err(), election.ErrDeposed) {
		t.Fatalf("candidate Err %v", l.Candidate().Err())
	}
	follower.Resign(ctx)
}

func TestNodeDeletedByOthers(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	admin := connect(t, shared.Servers())
	e := newElection(t, sess, path)
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, l.Node(), -1); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, l.Done(), long, "Done after the node was deleted")
	if !errors.Is(l.Err(), election.ErrNodeDeleted) {
		t.Fatalf("Err = %v", l.Err())
	}
	if err := l.Resign(ctx); err != nil {
		t.Fatalf("Resign: %v", err)
	}
}

func TestEnd(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	s1 := connect(t, shared.Servers())
	s2 := connect(t, shared.Servers())
	l, err := newElection(t, s1, path).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := newElection(t, s2, path).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	local, err := newElection(t, s1, path).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ender := newElection(t, connect(t, shared.Servers()), path)
	if err := ender.End(ctx); err != nil {
		t.Fatalf("End: %v", err)
	}
	for _, c := range []*election.Candidate{l.Candidate(), remote, local} {
		waitClosed(t, c.Done(), long, "candidate finished")
		if !errors.Is(c.Err(), election.ErrEnded) {
			t.Fatalf("candidate %s: %v", c.Node(), c.Err())
		}
		if err := c.Resign(ctx); err != nil {
			t.Fatalf("Resign after End: %v", err)
		}
	}
	if !errors.Is(l.Err(), election.ErrEnded) {
		t.Fatalf("leadership: %v", l.Err())
	}
	// Nobody can join an ended election, through any Election value.
	for _, e := range []*election.Election{ender, newElection(t, s2, path)} {
		if _, err := e.Nominate(ctx); !errors.Is(err, election.ErrEnded) {
			t.Fatalf("Nominate after End: %v", err)
		}
		if _, err := e.Campaign(ctx); !errors.Is(err, election.ErrEnded) {
			t.Fatalf("Campaign after End: %v", err)
		}
	}
	children, _, err := s2.Children(ctx, path)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		t.Fatal(err)
	}
	if len(children) != 0 {
		t.Fatalf("children left after End: %v", children)
	}
}

// TestFailedEndLeavesElectionUsable: an End that cannot mark the term
// node (here its ACL forbids writes) changes nothing: the same Election
// can still nominate, and a later End succeeds.
func TestFailedEndLeavesElectionUsable(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	readOnly := connect(t, shared.Servers(), func(c *zkcoord.Config) {
		c.ACL = []zkcoord.ACL{{Perms: zkcoord.PermRead, Scheme: "world", ID: "anyone"}}
	})
	e := newElection(t, sess, path)
	if err := sess.EnsurePath(ctx, zkcoord.Parent(e.TermPath())); err != nil {
		t.Fatal(err)
	}
	if _, err := readOnly.Create(ctx, e.TermPath(), nil, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	if err := e.End(ctx); !errors.Is(err, zkcoord.ErrNoAuth) {
		t.Fatalf("End on a read-only term node: %v, want ErrNoAuth", err)
	}
	// Deleting needs rights on the parent only.
	if err := sess.Delete(ctx, e.TermPath(), -1); err != nil {
		t.Fatal(err)
	}
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatalf("Campaign after a failed End: %v", err)
	}
	if err := e.End(ctx); err != nil {
		t.Fatalf("End: %v", err)
	}
	waitClosed(t, l.Candidate().Done(), long, "leader finished")
	if !errors.Is(l.Err(), election.ErrEnded) {
		t.Fatalf("leadership: %v", l.Err())
	}
	if _, err := e.Nominate(ctx); !errors.Is(err, election.ErrEnded) {
		t.Fatalf("Nominate after End: %v", err)
	}
}

func TestCampaignCancelled(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	e := newElection(t, sess, path)
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := e.Campaign(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Campaign: %v", err)
	}
	// The withdrawn candidate's node goes away.
	testkit.Eventually(t, long, "only the leader's node left", func() bool {
		children, _, err := sess.Children(ctx, path)
		return err == nil && len(children) == 1 && path+"/"+children[0] == l.Node()
	})
	l.Resign(ctx)
}

func TestCandidateWatch(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	e := newElection(t, sess, path)
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := c.Watch(ctx)
	if s := recv(t, w, long, "state"); s.Role != election.Following || s.Following != l.Node() {
		t.Fatalf("first state %+v", s)
	}
	l.Resign(ctx)
	if s := recv(t, w, long, "state"); s.Role != election.Leading || s.Token == 0 {
		t.Fatalf("second state %+v", s)
	}
	c.Resign(ctx)
	if s := recv(t, w, long, "state"); s.Role != election.Finished || !errors.Is(s.Err, election.ErrResigned) {
		t.Fatalf("third state %+v", s)
	}
	if _, ok := <-w; ok {
		t.Fatalf("Watch not closed after Finished")
	}
}

func TestObserve(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	watcher := newElection(t, connect(t, shared.Servers()), path)
	octx, stop := context.WithCancel(ctx)
	defer stop()
	obs := watcher.Observe(octx).Changes()
	if l := recv(t, obs, long, "first observation"); l != (election.Leader{}) {
		t.Fatalf("first observation %+v, want none", l)
	}
	e := newElection(t, sess, path, election.WithID("one"))
	l1, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e2 := newElection(t, sess, path, election.WithID("two"))
	c2, err := e2.Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The leader may be seen before it acknowledged; it must end up acting.
	for {
		l := recv(t, obs, long, "observation")
		if l.Node != l1.Node() || l.ID != "one" {
			t.Fatalf("observed %+v", l)
		}
		if l.Acting {
			if l.Token != l1.Token() || l.Term != l1.Term() {
				t.Fatalf("observed %+v", l)
			}
			break
		}
	}
	l1.Resign(ctx)
	for {
		l := recv(t, obs, long, "observation")
		if l.Node == l1.Node() || l.Node == "" {
			continue
		}
		if l.Node != c2.Node() || l.ID != "two" {
			t.Fatalf("observed %+v", l)
		}
		if l.Acting {
			break
		}
	}
	c2.Resign(ctx)
	for l := recv(t, obs, long, "observation"); l.Node != ""; l = recv(t, obs, long, "observation") {
	}
	stop()
	for range obs {
	}
}

// TestForeignChildren: names that are not participants are ignored, and a
// participant whose data is not text is still ordered and reported.
func TestForeignChildren(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	if err := sess.EnsurePath(ctx, path); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"-000", "0000000000", "lock-0000000001", "zzz"} {
		if _, err := sess.Create(ctx, path+"/"+name, []byte{0xff, 0}, 0); err != nil {
			t.Fatal(err)
		}
	}
	e := newElection(t, sess, path)
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	who, err := e.Leader(ctx)
	if err != nil || who.Node != l.Node() {
		t.Fatalf("Leader %+v, %v", who, err)
	}
	l.Resign(ctx)
}

func TestNominateOnEndedSession(t *testing.T) {
	ctx := testCtx(t, long)
	sess := connect(t, shared.Servers())
	e := newElection(t, sess, uniquePath(t))
	sess.Close(ctx)
	if _, err := e.Nominate(ctx); !errors.Is(err, election.ErrLost) || !errors.Is(err, zkcoord.ErrSessionClosed) {
		t.Fatalf("Nominate: %v", err)
	}
	if _, err := e.Campaign(ctx); !errors.Is(err, election.ErrLost) {
		t.Fatalf("Campaign: %v", err)
	}
	if _, err := e.Leader(ctx); err == nil {
		t.Fatalf("Leader on a closed Session succeeded")
	}
	if err := e.End(ctx); err == nil {
		t.Fatalf("End on a closed Session succeeded")
	}
}

// TestLowestNodeOfAnotherSession: a candidate whose node is the lowest but
// owned by another session must not lead, nor delete the node.
func TestLowestNodeOfAnotherSession(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	mine := connect(t, shared.Servers())
	theirs := connect(t, shared.Servers())
	if err := theirs.EnsurePath(ctx, path); err != nil {
		t.Fatal(err)
	}
	node := path + "/_c_0b5e1a3c-7d2f-4e6a-9c8b-1f2e3d4c5b6a-latch-0000000000"
	if _, err := theirs.Create(ctx, node, []byte("theirs"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	c, err := election.AdoptForTest(ctx, newElection(t, mine, path), node)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c.Done(), long, "candidate finished")
	if !errors.Is(c.Err(), zkcoord.ErrNotOwner) || c.Leadership() != nil {
		t.Fatalf("candidate on another session's node: err %v, leadership %v", c.Err(), c.Leadership())
	}
	if ok, _, _ := theirs.Exists(ctx, node); !ok {
		t.Fatalf("the other session's node was deleted")
	}
}

// wrappedNode is the path of a participant node in the election at
// path, named as ZooKeeper names the first one created after the
// directory's sequence counter wrapped past 2147483647. Tests create such
// nodes by name: getting the real counter there takes 2^31 creates and
// deletes.
func wrappedNode(path string) string {
	return path + "/_c_6f1d2e3c-4b5a-4968-8776-5a4b3c2d1e0f-latch--2147483648"
}

// checkWrapped checks that err is the refusal of a wrapped election,
// naming the election and the participant with the negative number.
func checkWrapped(t *testing.T, err error, path, node string) {
	t.Helper()
	if !errors.Is(err, zkcoord.ErrSequenceWrapped) {
		t.Fatalf("err = %v, want zkcoord.ErrSequenceWrapped", err)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, zkcoord.Base(node)) {
		t.Errorf("error %q does not name the election %s and the node %s", msg, path, zkcoord.Base(node))
	}
}

// checkParticipants checks that the election at path holds exactly the
// participant nodes want.
func checkParticipants(t *testing.T, sess *zkcoord.Session, path string, want ...string) {
	t.Helper()
	children, _, err := sess.Children(testCtx(t, long), path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range children {
		got = append(got, path+"/"+c)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("participants %v, want %v", got, want)
	}
}

// TestWrappedCandidateRefuses: after the sequence counter wraps, the next
// candidate's node is named "…-latch--2147483648", which sorts before the
// leader's. It must not lead beside the leader (nor depose it by bumping
// the term): it finishes with ErrSequenceWrapped and deletes its node, and
// the leader keeps its term.
func TestWrappedCandidateRefuses(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	s1 := connect(t, shared.Servers())
	s2 := connect(t, shared.Servers())
	e1 := newElection(t, s1, path, election.WithID("old"))
	old, err := e1.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What the new candidate's sequential create would have made.
	wrapped := wrappedNode(path)
	if _, err := s2.Create(ctx, wrapped, []byte("new"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	c, err := election.AdoptForTest(ctx, newElection(t, s2, path, election.WithID("new")), wrapped)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c.Done(), long, "the wrapped candidate finished")
	if c.Leadership() != nil {
		t.Fatalf("the candidate created after the wrap led beside %s", old.Node())
	}
	checkWrapped(t, c.Err(), path, wrapped)
	checkParticipants(t, s1, path, old.Node())
	if closed(old.Done()) {
		t.Fatalf("the leader lost its leadership: %v", old.Err())
	}
	_, st, err := s1.Get(ctx, e1.TermPath())
	if err != nil || int64(st.Version) != old.Term() {
		t.Fatalf("term node at version %v (%v), want the leader's term %d", st, err, old.Term())
	}
	if who, err := e1.Leader(ctx); err != nil || who.ID != "old" || !who.Acting {
		t.Fatalf("Leader: %+v, %v", who, err)
	}
	if err := old.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWrappedParticipantStopsCandidates: a participant with a negative
// number left by another client (a Curator LeaderLatch after the wrap)
// makes Campaign and Nominate fail with ErrSequenceWrapped, leaving no
// node behind; once it is gone, candidates lead again.
func TestWrappedParticipantStopsCandidates(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	other := connect(t, shared.Servers())
	sess := connect(t, shared.Servers())
	if err := other.EnsurePath(ctx, path); err != nil {
		t.Fatal(err)
	}
	wrapped := wrappedNode(path)
	if _, err := other.Create(ctx, wrapped, []byte("curator"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	e := newElection(t, sess, path, election.WithID("go"))
	l, err := e.Campaign(ctx)
	if err == nil {
		t.Fatalf("Campaign led (%s) beside the wrapped participant", l.Node())
	}
	checkWrapped(t, err, path, wrapped)
	c, err := e.Nominate(ctx)
	if err == nil {
		t.Fatalf("Nominate gave a candidate (%+v) beside the wrapped participant", c.State())
	}
	checkWrapped(t, err, path, wrapped)
	checkParticipants(t, sess, path, wrapped)

	if err := other.Delete(ctx, wrapped, -1); err != nil {
		t.Fatal(err)
	}
	l, err = e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}
