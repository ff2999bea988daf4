package elect

// Layout says how one election lays out its nodes.
type Layout struct {
	// Dir holds the participant nodes.
	Dir string
	// Order returns the participant names among Dir's children, the
	// leader first; names it leaves out are not participants.
	Order func(children []string) []string
	// TermPath is the term node, created when missing: its version counts
	// leaderships, and its data names the leader that bumped it last.
	TermPath string
	// LeaderPath, when not empty, is an ephemeral node a new leader
	// replaces in the transaction that bumps the term, so that observers
	// can tell that it took office.
	LeaderPath string
	// TermData returns what a leader whose node is node (a path) and whose
	// fencing token is token writes to the term node. It must name node
	// so that no other contender writes the same bytes: a bump whose reply
	// is lost is settled by the term node holding exactly them.
	TermData func(node string, token int64) []byte
	// LeaderData returns the leader node's data (used with LeaderPath).
	LeaderData func(node string, token, term int64) []byte
	// Refuse, if set, returns an error when the term node's data forbids
	// taking office or following (an election that was ended).
	Refuse func(termData []byte) error
	// RefuseOrder, if set, returns an error when the participants, as
	// Order returns them, are not known to be in creation order (their
	// directory's sequence counter wrapped), so that a newer participant
	// may sort before the leader: then no one may take office, or follow.
	RefuseOrder func(sorted []string) error
	// Exclude lists the leader nodes of other elections that must not
	// lead while this one does: the transaction that takes office also
	// creates and deletes each of them, so it fails while one exists, and
	// the contender gets Excluded's error. Each one's parent must be Dir
	// or an ancestor of Dir, which exist while the contender does.
	Exclude []string
	// Excluded returns the error of a contender refused by Exclude.
	Excluded func(leaderPath string) error
}

// refuse applies Refuse to data.
func (l *Layout) refuse(data []byte) error {
	if l.Refuse == nil {
		return nil
	}
	return l.Refuse(data)
}

// refuseOrder applies RefuseOrder to sorted.
func (l *Layout) refuseOrder(sorted []string) error {
	if l.RefuseOrder == nil {
		return nil
	}
	return l.RefuseOrder(sorted)
}
