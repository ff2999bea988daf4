//go:build unix

package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/zkcoord/zkcoord"
)

// queue put - refuses a line of 1 MiB or more before putting anything,
// with the size error; a put that fails midway says which items were put
// and which were not.
func TestQueuePutPartial(t *testing.T) {
	t.Parallel()
	q := unique(t)
	huge := bytes.Repeat([]byte("x"), 1<<20)
	r := zkcInput(t, append([]byte("a\nb\n"), append(huge, "\nc\n"...)...), "queue", "put", q, "-")
	wantFail(t, r, exitFailure, "line 3 of standard input is 1048576 bytes or more: larger than ZooKeeper lets a node hold; nothing was put")
	if strings.Contains(r.stderr, "token too long") {
		t.Errorf("a scanner error: %s", r)
	}
	if out := mustZkc(t, "queue", "len", q); out != "0\n" {
		t.Fatalf("queue len after the refused put: %q", out)
	}
	// An item the scanner takes but ZooKeeper refuses: the ones before it
	// are put.
	big := bytes.Repeat([]byte("y"), 1<<20-1)
	r = zkcInput(t, append([]byte("a\nb\n"), append(big, "\nc\n"...)...), "queue", "put", q, "-")
	wantFail(t, r, exitFailure, "queue put "+q+": item 3: ")
	wantFail(t, r, exitFailure, "items 1 to 2 of 4 were put, item 3 was not put, item 4 was not put")
	if out := mustZkc(t, "queue", "take", q, "-n", "2", "--no-wait"); out != "a\nb\n" {
		t.Errorf("the items put: %q", out)
	}
}

// resources add of several names adds every one it can, and says which it
// added and which it did not.
func TestResourcesAddPartial(t *testing.T) {
	t.Parallel()
	root := unique(t)
	mustZkc(t, "resources", "add", "g", "r2", "--root", root)
	r := zkc(t, "resources", "add", "g", "r1", "r2", "r3", "--root", root)
	wantFail(t, r, exitFailure, "resources add g: r2: already registered; added r1, r3")
	if out := mustZkc(t, "resources", "ls", "g", "--root", root); out != "r1\nr2\nr3\n" {
		t.Errorf("resources ls: %q", out)
	}
	r = zkc(t, "resources", "rm", "g", "r1", "r9", "--root", root)
	wantFail(t, r, exitFailure, "resources rm g: r9: no such resource; removed r1")
}

// A put whose reply was lost does not claim the item was not put.
func TestPartialPutOutcomeUnknown(t *testing.T) {
	err := fmt.Errorf("putting: %w", zkcoord.ErrOutcomeUnknown)
	got := partialPut(1, 3, err)
	want := "item 2: putting: zkcoord: outcome unknown; items 1 to 1 of 3 were put, item 2 may or may not have been put, item 3 was not put"
	if got != want {
		t.Errorf("partialPut:\n got %q\nwant %q", got, want)
	}
	if got := partialPut(0, 1, err); !strings.HasSuffix(got, "the item may or may not have been put") {
		t.Errorf("partialPut of one item: %q", got)
	}
}
