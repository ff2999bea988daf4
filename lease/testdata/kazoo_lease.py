"""Drives a Kazoo NonBlockingLease.

Arguments: hosts, path.
Commands: "take <id> <seconds>" -> "lease True|False".
Events: "ready", "error <message>".
"""
import datetime
import sys

from kazoo.client import KazooClient
from kazoo_peer import say, serve

zk = KazooClient(hosts=sys.argv[1], timeout=20.0)
zk.start()


def take(f):
    lease = zk.NonBlockingLease(sys.argv[2], datetime.timedelta(seconds=int(f[2])), identifier=f[1])
    say("lease", bool(lease))


serve({"take": take})
zk.stop()
