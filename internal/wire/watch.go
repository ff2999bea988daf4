package wire

// The records that set, re-arm, remove and deliver watches.

// WatcherEvent is the record of a notification: a frame whose ReplyHeader
// has Xid XidNotification (and, from 3.9 on, the zxid of the change that
// fired the watch). The server sends State StateSyncConnected.
type WatcherEvent struct {
	Type  EventType
	State State
	Path  string
}

// Encode appends the record.
func (r *WatcherEvent) Encode(e *Encoder) {
	e.Int32(int32(r.Type))
	e.Int32(int32(r.State))
	e.String(r.Path)
}

// Decode reads the record.
func (r *WatcherEvent) Decode(d *Decoder) {
	r.Type = EventType(d.Int32())
	r.State = State(d.Int32())
	r.Path = d.String()
}

// SetWatches re-arms one-time watches on a new connection of the same
// session (OpSetWatches, no reply record). The server fires at once each
// watch whose node changed after RelativeZxid, the last zxid the client
// saw. ZooKeeper's client sends these right after the ConnectRequest, in
// batches of about 128 KiB of paths.
type SetWatches struct {
	RelativeZxid int64
	DataWatches  []string
	ExistWatches []string
	ChildWatches []string
}

// Encode appends the record.
func (r *SetWatches) Encode(e *Encoder) {
	e.Int64(r.RelativeZxid)
	e.Strings(r.DataWatches)
	e.Strings(r.ExistWatches)
	e.Strings(r.ChildWatches)
}

// Decode reads the record.
func (r *SetWatches) Decode(d *Decoder) {
	r.RelativeZxid = d.Int64()
	r.DataWatches = d.Strings()
	r.ExistWatches = d.Strings()
	r.ChildWatches = d.Strings()
}

// SetWatches2 is SetWatches with persistent and persistent recursive
// watches too (OpSetWatches2, servers from 3.6 on): SetWatches' fields,
// then two more lists.
type SetWatches2 struct {
	SetWatches
	PersistentWatches          []string
	PersistentRecursiveWatches []string
}

// Encode appends the record.
func (r *SetWatches2) Encode(e *Encoder) {
	r.SetWatches.Encode(e)
	e.Strings(r.PersistentWatches)
	e.Strings(r.PersistentRecursiveWatches)
}

// Decode reads the record.
func (r *SetWatches2) Decode(d *Decoder) {
	r.SetWatches.Decode(d)
	r.PersistentWatches = d.Strings()
	r.PersistentRecursiveWatches = d.Strings()
}

// AddWatchRequest sets a persistent watch, recursive or not, that stays
// until removed (OpAddWatch, reply ErrorResponse with OK; servers from 3.6
// on).
type AddWatchRequest struct {
	Path string
	Mode AddWatchMode
}

// Encode appends the record.
func (r *AddWatchRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int32(int32(r.Mode))
}

// Decode reads the record.
func (r *AddWatchRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Mode = AddWatchMode(d.Int32())
}

// WatchesRequest is the record of the requests about the connection's
// watches of one type on a path, Path and Type, which ZooKeeper's jute
// declares twice alike: CheckWatchesRequest and RemoveWatchesRequest.
type WatchesRequest struct {
	Path string
	Type WatcherType
}

// Encode appends the record.
func (r *WatchesRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int32(int32(r.Type))
}

// Decode reads the record.
func (r *WatchesRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Type = WatcherType(d.Int32())
}

// CheckWatchesRequest asks whether the connection has a watch of Type on
// Path (OpCheckWatches, no reply record; NoWatcher if not).
type CheckWatchesRequest = WatchesRequest

// RemoveWatchesRequest removes the connection's watches of Type on Path
// (OpRemoveWatches, no reply record; NoWatcher if there were none). The
// server sends no event for them: the DataWatchRemoved, ChildWatchRemoved
// and PersistentWatchRemoved events are the client's to deliver.
type RemoveWatchesRequest = WatchesRequest
