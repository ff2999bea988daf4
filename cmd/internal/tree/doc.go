// Package tree reads and deletes whole subtrees for the zkcoord command
// (ls -R, ephemerals, rm -r): Walk lists a node and every node below it,
// many listings in flight on the Session's connection, and DeleteAll
// deletes a subtree children first in transactions. Both are built on the
// Session's own calls.
package tree
