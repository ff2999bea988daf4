//go:build zkcoord_broken_cache

package cache

const brokenDeletion = true
