package rebalance

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/internal/seq"
)

// DefaultRoot is the parent under which the command line and the console
// look for groups by name: `zkcoord rebalance run GROUP` works at
// DefaultRoot/GROUP.
const DefaultRoot = "/zkcoord/rebalance"

// Names of the nodes under /<root>/<group>.
const (
	clientsNode   = "clients"   // ephemeral sequential children, one per client
	resourcesNode = "resources" // children: resources; data: the allocation
	barriersNode  = "barriers"  // ephemeral children named after resources
	handoversNode = "handovers" // persistent children named after resources: how each barrier went
	termNode      = "term"      // version: the coordinator's term
	statusNode    = "status"    // global-barrier mode: the phase
	stoppedNode   = "stopped"   // global-barrier mode: check-ins
)

// clientPrefix is the name given to CreateProtected for client nodes: the
// node is _c_<uuid>-c_<sequence> and the client id is c_<sequence>.
const clientPrefix = "c_"

// layout holds the paths of one group.
type layout struct {
	root, group string
	base        string
}

func newLayout(path string) (layout, error) {
	if err := zkcoord.ValidatePath(path); err != nil {
		return layout{}, fmt.Errorf("%w: group path: %w", ErrInvalidOption, err)
	}
	if path == "/" {
		return layout{}, fmt.Errorf("%w: a group needs a node of its own, not /", ErrInvalidOption)
	}
	return layout{root: zkcoord.Parent(path), group: zkcoord.Base(path), base: path}, nil
}

func (l layout) clients() string            { return zkcoord.Join(l.base, clientsNode) }
func (l layout) client(node string) string  { return zkcoord.Join(l.base, clientsNode, node) }
func (l layout) resources() string          { return zkcoord.Join(l.base, resourcesNode) }
func (l layout) resource(id string) string  { return zkcoord.Join(l.base, resourcesNode, id) }
func (l layout) barriers() string           { return zkcoord.Join(l.base, barriersNode) }
func (l layout) barrier(res string) string  { return zkcoord.Join(l.base, barriersNode, res) }
func (l layout) handovers() string          { return zkcoord.Join(l.base, handoversNode) }
func (l layout) handover(res string) string { return zkcoord.Join(l.base, handoversNode, res) }
func (l layout) term() string               { return zkcoord.Join(l.base, termNode) }
func (l layout) status() string             { return zkcoord.Join(l.base, statusNode) }
func (l layout) stopped() string            { return zkcoord.Join(l.base, stoppedNode) }
func (l layout) checkIn(name string) string { return zkcoord.Join(l.base, stoppedNode, name) }

// election is the layout the election engine runs the coordinator's
// election on: client nodes in serial order of their sequence numbers, the
// term node holding the coordinator's id, no leader node.
func (l layout) election() elect.Layout {
	return elect.Layout{
		Dir: l.clients(),
		Order: func(children []string) []string {
			ms := parseClients(children)
			names := make([]string, len(ms))
			for i, m := range ms {
				names[i] = m.node
			}
			return names
		},
		TermPath: l.term(),
		TermData: func(node string, _ int64) []byte {
			return mustJSON(termInfo{Coordinator: zkcoord.StripProtected(zkcoord.Base(node))})
		},
	}
}

// ensure creates the group's persistent nodes that are missing. They are
// ensured at once: when the group exists, as it usually does, their reads
// share one round trip instead of taking one each.
func (l layout) ensure(ctx context.Context, sess *zkcoord.Session) error {
	paths := []string{l.clients(), l.resources(), l.barriers(), l.handovers(), l.term(), l.status(), l.stopped()}
	errs := make([]error, len(paths))
	fs := make([]func(), len(paths))
	for i, p := range paths {
		fs[i] = func() { errs[i] = sess.EnsurePath(ctx, p) }
	}
	elect.Parallel(fs...)
	return errors.Join(errs...)
}

// validResource reports whether id can name a resource.
func validResource(id string) error {
	if err := zkcoord.ValidateName(id); err != nil {
		return fmt.Errorf("%w: resource id: %w", ErrInvalidOption, err)
	}
	if zkcoord.IsProtected(id) {
		return fmt.Errorf("%w: resource id %q has the protected-node form", ErrInvalidOption, id)
	}
	return nil
}

// memberNode is one client node found under clients/.
type memberNode struct {
	node string // the znode name
	id   string // c_<sequence>
	seq  int32
}

// parseClient recognises a client node name; foreign names give ok=false.
func parseClient(node string) (memberNode, bool) {
	if !zkcoord.IsProtected(node) {
		return memberNode{}, false
	}
	id := zkcoord.StripProtected(node)
	digits, ok := strings.CutPrefix(id, clientPrefix)
	if !ok {
		return memberNode{}, false
	}
	n, ok := seq.Parse(digits)
	if !ok {
		return memberNode{}, false
	}
	return memberNode{node: node, id: id, seq: n}, true
}

// parseClients returns the recognised client nodes in election order,
// ignoring foreign names and duplicate ids. The order is the serial order
// of the sequence numbers present (see
// docs/protocol.md#sequence-numbers-and-their-wrap).
func parseClients(children []string) []memberNode {
	out := make([]memberNode, 0, len(children))
	seen := make(map[string]bool, len(children))
	for _, c := range children {
		if m, ok := parseClient(c); ok && !seen[m.id] {
			seen[m.id] = true
			out = append(out, m)
		}
	}
	order := seq.SerialBy(out, func(x memberNode) int32 { return x.seq })
	slices.SortFunc(out, func(a, b memberNode) int {
		return cmp.Or(order.Compare(a.seq, b.seq), strings.Compare(a.node, b.node))
	})
	return out
}

func clientIDs(ms []memberNode) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.id
	}
	return ids
}

// parseResources keeps the children of resources/ that are valid resource
// ids, sorted.
func parseResources(children []string) []string {
	out := make([]string, 0, len(children))
	for _, c := range children {
		if validResource(c) == nil {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// clientInfo is the data of a client node.
type clientInfo struct {
	Name string `json:"name,omitempty"`
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	Mode string `json:"mode,omitempty"`
	// Weight is the client's capacity; absent (older members) means 1.
	Weight int64 `json:"weight,omitempty"`
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func pid() int { return os.Getpid() }

// barrierInfo is the data of a barrier node; the fencing token is the
// node's czxid.
type barrierInfo struct {
	Client     string `json:"client"`
	Generation int64  `json:"generation"`
	// Clean records that the resource's previous barrier was released
	// cleanly (its handover mark said so when this barrier was created):
	// the transaction that created the barrier wrote it, so it tells
	// which attempt of an acquisition succeeded, even after a lost reply.
	Clean bool `json:"clean,omitempty"`
}

// termInfo is the data of the term node; the term is the node's version.
type termInfo struct {
	Coordinator string `json:"coordinator"`
}

// Phases of the global-barrier mode, as written to the status node.
const (
	PhaseStopActivity      = "StopActivity"
	PhaseResourcesAssigned = "ResourcesAssigned"
	PhaseStartConfirmed    = "StartConfirmed"
)

// statusInfo is the data of the status node.
type statusInfo struct {
	Phase      string `json:"phase"`
	Generation int64  `json:"generation"`
	Term       int64  `json:"term"`
}

func decodeStatus(data []byte) (statusInfo, error) {
	st, err := zkcoord.DecodeJSON[statusInfo](data, "status node")
	if err != nil || len(data) == 0 {
		return st, err
	}
	switch st.Phase {
	case PhaseStopActivity, PhaseResourcesAssigned, PhaseStartConfirmed:
	default:
		return st, fmt.Errorf("%w: status node: unknown phase %q", zkcoord.ErrBadData, st.Phase)
	}
	return st, nil
}

// checkInName is the name of a client's check-in node for a generation.
func checkInName(id string, gen int64) string {
	return id + "." + strconv.FormatInt(gen, 10)
}

// parseCheckIn splits a check-in node name; foreign names give ok=false.
func parseCheckIn(name string) (id string, gen int64, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return "", 0, false
	}
	gen, err := strconv.ParseInt(name[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return name[:i], gen, true
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are marshalled here
	}
	return b
}
