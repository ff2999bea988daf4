"""The line protocol every Kazoo peer of internal/interop speaks.

serve prints "ready", then runs each command line read from stdin through
the handler named by its first word, which prints the answer. An unknown
command, or a handler that raises, is answered "error <message>" and the
peer keeps serving.
"""
import sys


def say(*words):
    """Prints one line of words and flushes it."""
    print(*words, flush=True)


def serve(handlers):
    """Answers stdin's command lines with handlers: name -> f(fields)."""
    say("ready")
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        try:
            handler = handlers.get(f[0])
            if handler is None:
                say("error unknown command", line.strip())
            else:
                handler(f)
        except Exception as e:  # report, keep serving
            say("error", repr(e))
