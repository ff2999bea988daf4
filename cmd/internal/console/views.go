package console

import "time"

// Kind names a recipe the console recognises.
type Kind string

// The recipes the console recognises.
const (
	KindGroup         Kind = "group"
	KindElection      Kind = "election"
	KindMutex         Kind = "lock"
	KindRWLock        Kind = "rwlock"
	KindSemaphore     Kind = "semaphore"
	KindQueue         Kind = "queue"
	KindBarrier       Kind = "barrier"
	KindDoubleBarrier Kind = "double-barrier"
	KindCounter       Kind = "counter"
	KindService       Kind = "service"
	KindMembership    Kind = "membership"
)

// View is the state of one recipe as the page shows it. Exactly one of the
// kind-specific fields is set.
type View struct {
	Path     string        `json:"path"`
	Kind     Kind          `json:"kind"`
	Group    *GroupView    `json:"group,omitempty"`
	Election *ElectionView `json:"election,omitempty"`
	Lock     *LockView     `json:"lock,omitempty"`
	Queue    *QueueView    `json:"queue,omitempty"`
	Barrier  *BarrierView  `json:"barrier,omitempty"`
	Counter  *CounterView  `json:"counter,omitempty"`
	Service  *ServiceView  `json:"service,omitempty"`
	// Membership is a group of the group package (group.Join), not a
	// rebalancer group.
	Membership *MembershipView `json:"membership,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// GroupView is a rebalancer group.
type GroupView struct {
	Root        string `json:"root"`
	Name        string `json:"name"`
	Coordinator string `json:"coordinator,omitempty"`
	// Term is the term node's version; TermHolder wrote it.
	Term       int64  `json:"term"`
	TermHolder string `json:"term_holder,omitempty"`
	Generation int64  `json:"generation"`
	// Mode is the coordinator's mode, as its client node says.
	Mode      string   `json:"mode,omitempty"`
	Members   []Member `json:"members"`
	Resources int      `json:"resources"`
	// Allocation maps a member id to the resources allocated to it.
	Allocation map[string][]string `json:"allocation"`
	// Barriers maps a resource to the holder of its barrier.
	Barriers    map[string]Barrier `json:"barriers"`
	Unallocated []string           `json:"unallocated,omitempty"`
	Pending     int                `json:"pending"`
	Rebalancing bool               `json:"rebalancing"`
	Phase       string             `json:"phase,omitempty"`
	AllocError  string             `json:"alloc_error,omitempty"`
}

// Member is one rebalancer client.
type Member struct {
	ID          string `json:"id"`
	Session     string `json:"session"`
	Name        string `json:"name,omitempty"`
	Host        string `json:"host,omitempty"`
	PID         int    `json:"pid,omitempty"`
	Mode        string `json:"mode,omitempty"`
	Coordinator bool   `json:"coordinator,omitempty"`
}

// Barrier is the holder of one resource barrier; Token is its czxid.
type Barrier struct {
	Client  string `json:"client"`
	Token   int64  `json:"token"`
	Session string `json:"session"`
}

// ElectionView is a leader election.
type ElectionView struct {
	Leader *Contender `json:"leader,omitempty"`
	// Acting is true when the leader node names the lowest candidate: the
	// leader has taken office.
	Acting       bool        `json:"acting"`
	Term         int64       `json:"term"`
	Participants []Contender `json:"participants"`
}

// Contender is a node competing in an election or for a lock, in order.
type Contender struct {
	Node    string    `json:"node"`
	ID      string    `json:"id,omitempty"`
	Session string    `json:"session"`
	Token   int64     `json:"token"`
	Since   time.Time `json:"since"`
	Write   bool      `json:"write,omitempty"`
}

// LockView is a mutex, read/write lock or semaphore: who holds it and who
// waits, in order.
type LockView struct {
	Holders []Contender `json:"holders"`
	Waiters []Contender `json:"waiters"`
}

// QueueView is a queue.
type QueueView struct {
	Depth  int       `json:"depth"`
	Oldest time.Time `json:"oldest,omitzero"`
}

// BarrierView is a barrier or double barrier.
type BarrierView struct {
	// Set: a simple barrier's node exists and holds processes back.
	Set bool `json:"set"`
	// Members and Ready describe a double barrier.
	Members []string `json:"members,omitempty"`
	Ready   bool     `json:"ready,omitempty"`
}

// CounterView is a shared counter.
type CounterView struct {
	Value   int32 `json:"value"`
	Version int32 `json:"version"`
}

// ServiceView is a service of the discovery package (curator-x-discovery's
// layout): its registered instances, sorted by id.
type ServiceView struct {
	Name      string     `json:"name"`
	Instances []Instance `json:"instances"`
}

// Instance is one registered instance of a service.
type Instance struct {
	// Node is the instance's node name: its id, followed by a sequence
	// number for DYNAMIC_SEQUENTIAL instances.
	Node    string `json:"node"`
	ID      string `json:"id"`
	Address string `json:"address,omitempty"`
	Port    int    `json:"port,omitempty"`
	SSLPort int    `json:"ssl_port,omitempty"`
	// Registered is the instance's own registration time.
	Registered time.Time `json:"registered,omitzero"`
	Type       string    `json:"type,omitempty"`
	URI        string    `json:"uri,omitempty"`
	// Payload is the payload's JSON, shortened.
	Payload string `json:"payload,omitempty"`
	// Disabled instances ("enabled": false) are not handed out by
	// providers.
	Disabled bool `json:"disabled,omitempty"`
	// Session owns the node of a DYNAMIC instance; empty for persistent
	// ones.
	Session string `json:"session,omitempty"`
	// Error says why the node's data is not an instance.
	Error string `json:"error,omitempty"`
}

// MembershipView is a group of members (group.Join): the ephemeral
// children of its node, sorted by id.
type MembershipView struct {
	Members []GroupMember `json:"members"`
}

// GroupMember is one member of a MembershipView.
type GroupMember struct {
	Node    string    `json:"node"`
	ID      string    `json:"id"`
	Session string    `json:"session"`
	Token   int64     `json:"token"`
	Since   time.Time `json:"since"`
	// Data is the member's data as text, shortened, or its size.
	Data string `json:"data,omitempty"`
}

// Event is one entry of the timeline.
type Event struct {
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	Path string    `json:"path"`
	Kind Kind      `json:"kind"`
	Text string    `json:"text"`
}
