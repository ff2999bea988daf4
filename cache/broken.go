//go:build !zkcoord_broken_cache

package cache

// brokenDeletion, true only in a build with the zkcoord_broken_cache tag,
// restores an old defect for the chaos harness to show that it catches
// it: a NodeDeleted event removes the node at once, even when the node
// was created again and its parent listed since (see handleOneShot). The
// defect lives in the one-shot watches, so such a build follows every
// cache on them.
const brokenDeletion = false
