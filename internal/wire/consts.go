package wire

import "strconv"

// OpCode is a request type, from ZooDefs.OpCode. It is a RequestHeader's
// Type and a MultiHeader's Type.
type OpCode int32

// The request types of ZooDefs.OpCode.
const (
	OpNotification         OpCode = 0
	OpCreate               OpCode = 1
	OpDelete               OpCode = 2
	OpExists               OpCode = 3
	OpGetData              OpCode = 4
	OpSetData              OpCode = 5
	OpGetACL               OpCode = 6
	OpSetACL               OpCode = 7
	OpGetChildren          OpCode = 8
	OpSync                 OpCode = 9
	OpPing                 OpCode = 11
	OpGetChildren2         OpCode = 12
	OpCheck                OpCode = 13
	OpMulti                OpCode = 14
	OpCreate2              OpCode = 15
	OpReconfig             OpCode = 16
	OpCheckWatches         OpCode = 17
	OpRemoveWatches        OpCode = 18
	OpCreateContainer      OpCode = 19
	OpDeleteContainer      OpCode = 20
	OpCreateTTL            OpCode = 21
	OpMultiRead            OpCode = 22
	OpAuth                 OpCode = 100
	OpSetWatches           OpCode = 101
	OpSASL                 OpCode = 102
	OpGetEphemerals        OpCode = 103
	OpGetAllChildrenNumber OpCode = 104
	OpSetWatches2          OpCode = 105
	OpAddWatch             OpCode = 106
	OpWhoAmI               OpCode = 107
	OpCreateSession        OpCode = -10
	OpCloseSession         OpCode = -11
	// OpError is the type of a failed operation's result in a multi reply.
	OpError OpCode = -1
)

var opNames = map[OpCode]string{
	OpNotification: "notification", OpCreate: "create", OpDelete: "delete",
	OpExists: "exists", OpGetData: "getData", OpSetData: "setData",
	OpGetACL: "getACL", OpSetACL: "setACL", OpGetChildren: "getChildren",
	OpSync: "sync", OpPing: "ping", OpGetChildren2: "getChildren2",
	OpCheck: "check", OpMulti: "multi", OpCreate2: "create2",
	OpReconfig: "reconfig", OpCheckWatches: "checkWatches",
	OpRemoveWatches: "removeWatches", OpCreateContainer: "createContainer",
	OpDeleteContainer: "deleteContainer", OpCreateTTL: "createTTL",
	OpMultiRead: "multiRead", OpAuth: "auth", OpSetWatches: "setWatches",
	OpSASL: "sasl", OpGetEphemerals: "getEphemerals",
	OpGetAllChildrenNumber: "getAllChildrenNumber", OpSetWatches2: "setWatches2",
	OpAddWatch: "addWatch", OpWhoAmI: "whoAmI", OpCreateSession: "createSession",
	OpCloseSession: "closeSession", OpError: "error",
}

// String returns ZooKeeper's name of the operation.
func (o OpCode) String() string {
	return nameOf(opNames, o, "OpCode")
}

// nameOf returns a value's name in names, or typ(value) for a value the
// table lacks, as the String methods of the protocol's numbers do.
func nameOf[T ~int32](names map[T]string, v T, typ string) string {
	if n, ok := names[v]; ok {
		return n
	}
	return typ + "(" + strconv.Itoa(int(v)) + ")"
}

// The xids ZooKeeper reserves (ClientCnxn). Ordinary requests use xids from
// 1 up to math.MaxInt32 and then wrap to 1.
const (
	// XidNotification marks a reply that is a watch event (WatcherEvent).
	XidNotification int32 = -1
	// XidPing is the xid of a ping and of its reply.
	XidPing int32 = -2
	// XidAuth is the xid of an AuthPacket and of its reply.
	XidAuth int32 = -4
	// XidSetWatches is the xid ZooKeeper's client gives setWatches and
	// setWatches2 when it re-arms watches after a reconnect.
	XidSetWatches int32 = -8
)

// Code is an error code of KeeperException.Code: a ReplyHeader's Err, a
// MultiHeader's Err and an ErrorResponse's Err. Every Code but OK is an
// error; compare with errors.Is(err, wire.ErrNoNode).
type Code int32

// The error codes of KeeperException.Code.
const (
	OK                              Code = 0
	ErrSystemError                  Code = -1
	ErrRuntimeInconsistency         Code = -2
	ErrDataInconsistency            Code = -3
	ErrConnectionLoss               Code = -4
	ErrMarshallingError             Code = -5
	ErrUnimplemented                Code = -6
	ErrOperationTimeout             Code = -7
	ErrBadArguments                 Code = -8
	ErrUnknownSession               Code = -12
	ErrNewConfigNoQuorum            Code = -13
	ErrReconfigInProgress           Code = -14
	ErrAPIError                     Code = -100
	ErrNoNode                       Code = -101
	ErrNoAuth                       Code = -102
	ErrBadVersion                   Code = -103
	ErrNoChildrenForEphemerals      Code = -108
	ErrNodeExists                   Code = -110
	ErrNotEmpty                     Code = -111
	ErrSessionExpired               Code = -112
	ErrInvalidCallback              Code = -113
	ErrInvalidACL                   Code = -114
	ErrAuthFailed                   Code = -115
	ErrSessionMoved                 Code = -118
	ErrNotReadOnly                  Code = -119
	ErrEphemeralOnLocalSession      Code = -120
	ErrNoWatcher                    Code = -121
	ErrRequestTimeout               Code = -122
	ErrReconfigDisabled             Code = -123
	ErrSessionClosedRequireSASLAuth Code = -124
	ErrQuotaExceeded                Code = -125
	ErrThrottledOp                  Code = -127
)

var codeNames = map[Code]string{
	OK: "OK", ErrSystemError: "SystemError",
	ErrRuntimeInconsistency: "RuntimeInconsistency",
	ErrDataInconsistency:    "DataInconsistency", ErrConnectionLoss: "ConnectionLoss",
	ErrMarshallingError: "MarshallingError", ErrUnimplemented: "Unimplemented",
	ErrOperationTimeout: "OperationTimeout", ErrBadArguments: "BadArguments",
	ErrUnknownSession: "UnknownSession", ErrNewConfigNoQuorum: "NewConfigNoQuorum",
	ErrReconfigInProgress: "ReconfigInProgress", ErrAPIError: "APIError",
	ErrNoNode: "NoNode", ErrNoAuth: "NoAuth", ErrBadVersion: "BadVersion",
	ErrNoChildrenForEphemerals: "NoChildrenForEphemerals",
	ErrNodeExists:              "NodeExists", ErrNotEmpty: "NotEmpty",
	ErrSessionExpired: "SessionExpired", ErrInvalidCallback: "InvalidCallback",
	ErrInvalidACL: "InvalidACL", ErrAuthFailed: "AuthFailed",
	ErrSessionMoved: "SessionMoved", ErrNotReadOnly: "NotReadOnly",
	ErrEphemeralOnLocalSession: "EphemeralOnLocalSession",
	ErrNoWatcher:               "NoWatcher", ErrRequestTimeout: "RequestTimeout",
	ErrReconfigDisabled:             "ReconfigDisabled",
	ErrSessionClosedRequireSASLAuth: "SessionClosedRequireSaslAuth",
	ErrQuotaExceeded:                "QuotaExceeded", ErrThrottledOp: "ThrottledOp",
}

// String returns the code's name in KeeperException.Code, such as "NoNode",
// or "Code(-99)" for a code ZooKeeper does not define.
func (c Code) String() string {
	return nameOf(codeNames, c, "Code")
}

// Error returns the name and number, such as "zookeeper: NoNode (-101)".
func (c Code) Error() string {
	return "zookeeper: " + c.String() + " (" + strconv.Itoa(int(c)) + ")"
}

// Err returns nil for OK and c for every other code.
func (c Code) Err() error {
	if c == OK {
		return nil
	}
	return c
}

// EventType is a WatcherEvent's Type (Watcher.Event.EventType).
type EventType int32

// The event types of Watcher.Event.EventType.
const (
	EventNone                   EventType = -1
	EventNodeCreated            EventType = 1
	EventNodeDeleted            EventType = 2
	EventNodeDataChanged        EventType = 3
	EventNodeChildrenChanged    EventType = 4
	EventDataWatchRemoved       EventType = 5
	EventChildWatchRemoved      EventType = 6
	EventPersistentWatchRemoved EventType = 7
)

var eventNames = map[EventType]string{
	EventNone: "None", EventNodeCreated: "NodeCreated", EventNodeDeleted: "NodeDeleted",
	EventNodeDataChanged: "NodeDataChanged", EventNodeChildrenChanged: "NodeChildrenChanged",
	EventDataWatchRemoved: "DataWatchRemoved", EventChildWatchRemoved: "ChildWatchRemoved",
	EventPersistentWatchRemoved: "PersistentWatchRemoved",
}

// String returns the name in Watcher.Event.EventType.
func (t EventType) String() string {
	return nameOf(eventNames, t, "EventType")
}

// State is a WatcherEvent's State (Watcher.Event.KeeperState). The server
// sends SyncConnected in every watch event; the other states are the
// client's own.
type State int32

// The states of Watcher.Event.KeeperState (Unknown and NoSyncConnected
// are deprecated there and left out).
const (
	StateDisconnected      State = 0
	StateSyncConnected     State = 3
	StateAuthFailed        State = 4
	StateConnectedReadOnly State = 5
	StateSaslAuthenticated State = 6
	StateExpired           State = -112
	StateClosed            State = 7
)

var stateNames = map[State]string{
	StateDisconnected: "Disconnected", StateSyncConnected: "SyncConnected",
	StateAuthFailed: "AuthFailed", StateConnectedReadOnly: "ConnectedReadOnly",
	StateSaslAuthenticated: "SaslAuthenticated", StateExpired: "Expired",
	StateClosed: "Closed",
}

// String returns the name in Watcher.Event.KeeperState.
func (s State) String() string {
	return nameOf(stateNames, s, "State")
}

// CreateMode is the Flags of a create request (CreateMode.java).
type CreateMode int32

// The flags of CreateMode. The TTL modes need createTTL and a server
// started with zookeeper.extendedTypesEnabled=true; Container needs
// createContainer.
const (
	ModePersistent                  CreateMode = 0
	ModeEphemeral                   CreateMode = 1
	ModePersistentSequential        CreateMode = 2
	ModeEphemeralSequential         CreateMode = 3
	ModeContainer                   CreateMode = 4
	ModePersistentWithTTL           CreateMode = 5
	ModePersistentSequentialWithTTL CreateMode = 6
)

// Ephemeral reports whether nodes of the mode end with their session.
func (m CreateMode) Ephemeral() bool { return m == ModeEphemeral || m == ModeEphemeralSequential }

// Sequential reports whether the server appends a sequence number to the name.
func (m CreateMode) Sequential() bool {
	return m == ModePersistentSequential || m == ModeEphemeralSequential || m == ModePersistentSequentialWithTTL
}

// TTL reports whether the mode is one of the TTL modes.
func (m CreateMode) TTL() bool {
	return m == ModePersistentWithTTL || m == ModePersistentSequentialWithTTL
}

// Perm is a set of permissions of an ACL (ZooDefs.Perms).
type Perm int32

// The permissions of ZooDefs.Perms.
const (
	PermRead   Perm = 1 << 0
	PermWrite  Perm = 1 << 1
	PermCreate Perm = 1 << 2
	PermDelete Perm = 1 << 3
	PermAdmin  Perm = 1 << 4
	PermAll         = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// AddWatchMode is an AddWatchRequest's Mode (ZooDefs.AddWatchModes).
type AddWatchMode int32

// The modes of ZooDefs.AddWatchModes.
const (
	AddWatchPersistent          AddWatchMode = 0
	AddWatchPersistentRecursive AddWatchMode = 1
)

// WatcherType is the Type of checkWatches and removeWatches requests
// (Watcher.WatcherType).
type WatcherType int32

// The types of Watcher.WatcherType. Persistent and PersistentRecursive are
// understood by servers from 3.9 on.
const (
	WatcherChildren            WatcherType = 1
	WatcherData                WatcherType = 2
	WatcherAny                 WatcherType = 3
	WatcherPersistent          WatcherType = 4
	WatcherPersistentRecursive WatcherType = 5
)
