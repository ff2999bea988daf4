package cache

import "github.com/zkcoord/zkcoord"

// Node is a cached node: its path, data and stat as last read. Data is
// shared with the cache and must not be modified.
type Node struct {
	Path string
	Data []byte
	Stat zkcoord.Stat
}
