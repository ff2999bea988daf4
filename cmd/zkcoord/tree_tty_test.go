//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the side a test drives and the side a
// program sees as its terminal.
func openPTY(t *testing.T) (driver, term *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	driver = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return driver, term
}

// zkcTerminal runs the binary with its standard input, output and error on
// a terminal, types input, and returns what the terminal showed (line ends
// as "\n"; the terminal echoes what was typed) and the exit status.
func zkcTerminal(t *testing.T, input string, args ...string) (string, int) {
	t.Helper()
	driver, term := openPTY(t)
	defer driver.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = testEnv(cluster.ConnectString())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, term, term
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close() // the program's copy keeps it open
	if _, err := io.WriteString(driver, input); err != nil {
		t.Fatal(err)
	}
	shown := make(chan []byte, 1)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, driver) // ends with EIO once the program's side is closed
		shown <- b.Bytes()
	}()
	err := cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("zkcoord %v did not finish within a minute", args)
	}
	return strings.ReplaceAll(string(<-shown), "\r\n", "\n"), code
}

// On a terminal, get shows text as it is, text with control characters
// escaped and other bytes as a hex dump, each with a note; --raw writes
// the bytes as they are.
func TestTreeTerminalGet(t *testing.T) {
	t.Parallel()
	root := unique(t)
	sess := session(t)
	ctx := t.Context()
	if err := sess.EnsurePath(ctx, root); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"text": "hello", "escape": "\x1b[2Jgone", "binary": "\x00\x01\xff"} {
		if _, err := sess.Create(ctx, root+"/"+name, []byte(data), zkcoord.FlagPersistent); err != nil {
			t.Fatal(err)
		}
	}
	if shown, code := zkcTerminal(t, "", "get", root+"/text"); code != 0 || shown != "hello\n" {
		t.Errorf("get of text on a terminal: exit %d, %q", code, shown)
	}
	shown, code := zkcTerminal(t, "", "get", root+"/escape")
	if code != 0 || !strings.Contains(shown, `\x1b[2Jgone`+"\n") || strings.Contains(shown, "\x1b") ||
		!strings.Contains(shown, "shown escaped") {
		t.Errorf("get of an escape sequence on a terminal: exit %d, %q", code, shown)
	}
	shown, code = zkcTerminal(t, "", "get", root+"/binary")
	if code != 0 || !strings.Contains(shown, "00000000  00 01 ff ") || !strings.Contains(shown, "|...|") ||
		!strings.Contains(shown, "3 bytes that are not UTF-8 text, shown as a hex dump") || strings.Contains(shown, "\xff") {
		t.Errorf("get of binary data on a terminal: exit %d, %q", code, shown)
	}
	if shown, code := zkcTerminal(t, "", "get", root+"/escape", "--raw"); code != 0 || shown != "\x1b[2Jgone" {
		t.Errorf("get --raw on a terminal: exit %d, %q", code, shown)
	}
}

// On a terminal rm -r asks: anything but yes deletes nothing (exit 1);
// yes deletes the subtree.
func TestTreeTerminalRemove(t *testing.T) {
	t.Parallel()
	root := unique(t)
	sess := session(t)
	ctx := t.Context()
	if err := sess.EnsurePath(ctx, root+"/a/b"); err != nil {
		t.Fatal(err)
	}
	shown, code := zkcTerminal(t, "n\n", "rm", "-r", root)
	if code != exitFailure || !strings.Contains(shown, "Delete "+root+" and the 2 nodes below it? [y/N] ") ||
		!strings.Contains(shown, "zkcoord: nothing deleted\n") {
		t.Errorf("rm -r answered n: exit %d, %q", code, shown)
	}
	if n, err := sess.CountDescendants(ctx, root); err != nil || n != 2 {
		t.Fatalf("after answering n: %d nodes below %s, %v", n, root, err)
	}
	shown, code = zkcTerminal(t, "yes\n", "rm", "-r", root)
	if code != 0 || !strings.Contains(shown, "deleted 3 nodes\n") {
		t.Errorf("rm -r answered yes: exit %d, %q", code, shown)
	}
	if ok, _, err := sess.Exists(ctx, root); err != nil || ok {
		t.Errorf("after answering yes: %v, %v", ok, err)
	}
}
