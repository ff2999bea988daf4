"""Drives Kazoo's ReadLock and WriteLock for interoperability tests.

Arguments: hosts, path. Commands, each answered on a thread of its own:
"read" -> "read held" once a ReadLock is held; "write" -> "write held" once
a WriteLock is held; "release" -> "released" (releases every lock held).
Kazoo learns Curator's node names through extra_lock_patterns: a reader
waits for "__WRIT__" nodes, a writer for "__READ__" and "__WRIT__" nodes.
Events: "ready", "error <message>".
"""
import sys
import threading

from kazoo.client import KazooClient

zk = KazooClient(hosts=sys.argv[1], timeout=20.0)
zk.start()
path = sys.argv[2]
held = []
lock = threading.Lock()


def out(line):
    with lock:
        print(line, flush=True)


def take(kind):
    try:
        if kind == "read":
            l = zk.ReadLock(path, "kazoo", extra_lock_patterns=["__WRIT__"])
        else:
            l = zk.WriteLock(path, "kazoo", extra_lock_patterns=["__READ__", "__WRIT__"])
        l.acquire()
        with lock:
            held.append(l)
        out(kind + " held")
    except Exception as e:
        out("error " + repr(e))


out("ready")
for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] in ("read", "write"):
        threading.Thread(target=take, args=(f[0],), daemon=True).start()
    elif f[0] == "release":
        with lock:
            ls = list(held)
            held.clear()
        for l in ls:
            l.release()
        out("released")
    else:
        out("error unknown command " + line.strip())
zk.stop()
