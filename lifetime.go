package zkcoord

import "github.com/zkcoord/zkcoord/internal/lifetime"

// The recipes' background work (internal/recipe.EnsureDeletedLater) runs
// on the Session's own goroutines, which Close waits for.
func init() {
	lifetime.Register(func(owner any, f func()) bool { return owner.(*Session).spawn(f) })
}
