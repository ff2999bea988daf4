// Package launch starts client OS processes for multi-process tests and
// breaks them on demand: kill (SIGKILL), terminate (SIGTERM, then SIGKILL),
// pause (SIGSTOP) and resume (SIGCONT).
//
// A child is usually the test binary itself, re-executed to run only a
// helper test that plays a role ([Self], [Role], [Args]):
//
//	func TestHelperProcess(t *testing.T) {
//		if launch.Role() == "" {
//			t.Skip("helper process only")
//		}
//		// ... play launch.Role() with launch.Args(); read commands from
//		// os.Stdin, report on os.Stdout ...
//		os.Exit(0)
//	}
//
//	p, err := group.Start(ctx, launch.Self("client-1", "member", "-n", "3"), sink)
//
// Every line the child writes on its standard output is passed, in order, to
// the sink given to [Start], from one goroutine per process; the last 64 KiB
// of its standard error are kept for failure reports ([Proc.Stderr]). Lines
// are written to its standard input with [Proc.Send].
//
// On Linux children are started with PR_SET_PDEATHSIG set to SIGKILL, so
// none outlives the test binary (the signal follows the OS thread that
// started the child, so every child is started from one goroutine locked to
// its thread). Elsewhere there is no such signal: a [Group] kills all of its
// processes on Close, for t.Cleanup, and a process dies with the context
// given to [Start]. On Windows, Terminate kills at once and Pause and Resume
// are not supported.
//
// All methods of Proc and Group are safe for concurrent use.
package launch
