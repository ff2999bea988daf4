"""Drives a Kazoo LockingQueue.

Arguments: hosts, path.
Commands: "put <value> <priority>" -> "put"; "get" -> "got <value>" or
"got none" (waits at most one second); "consume" -> "consumed True|False";
"release" -> "released True|False".
Events: "ready", "error <message>".
"""
import sys

from kazoo.client import KazooClient

zk = KazooClient(hosts=sys.argv[1], timeout=20.0)
zk.start()
q = zk.LockingQueue(sys.argv[2])
print("ready", flush=True)
for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    try:
        if f[0] == "put":
            q.put(f[1].encode(), priority=int(f[2]))
            print("put", flush=True)
        elif f[0] == "get":
            v = q.get(timeout=1)
            print("got", "none" if v is None else v.decode(), flush=True)
        elif f[0] == "consume":
            print("consumed", q.consume(), flush=True)
        elif f[0] == "release":
            print("released", q.release(), flush=True)
        else:
            print("error unknown command", line.strip(), flush=True)
    except Exception as e:  # report, keep serving
        print("error", repr(e), flush=True)
zk.stop()
