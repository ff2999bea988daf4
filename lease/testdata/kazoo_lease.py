"""Drives a Kazoo NonBlockingLease.

Arguments: hosts, path.
Commands: "take <id> <seconds>" -> "lease True|False".
Events: "ready", "error <message>".
"""
import datetime
import sys

from kazoo.client import KazooClient

zk = KazooClient(hosts=sys.argv[1], timeout=20.0)
zk.start()
print("ready", flush=True)
for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    try:
        if f[0] == "take":
            lease = zk.NonBlockingLease(sys.argv[2], datetime.timedelta(seconds=int(f[2])), identifier=f[1])
            print("lease", bool(lease), flush=True)
        else:
            print("error unknown command", line.strip(), flush=True)
    except Exception as e:  # report, keep serving
        print("error", repr(e), flush=True)
zk.stop()
