// Package lifetime lets the recipes start background work that belongs to
// a Session: the Session's Close waits for it, so that no goroutine
// outlives the Session. The root package registers the one
// implementation; the Session stays free of a method that only recipes
// need.
package lifetime

// spawner runs f on a goroutine of owner's, reporting false (without
// running f) if owner has begun to close.
var spawner func(owner any, f func()) bool

// Register sets the implementation of Go. The root package calls it once,
// when it is initialised.
func Register(spawn func(owner any, f func()) bool) { spawner = spawn }

// Go runs f on a goroutine that owner (a *zkcoord.Session) waits for
// when it closes. It reports false, without running f, once owner has
// begun to close.
func Go(owner any, f func()) bool { return spawner(owner, f) }
