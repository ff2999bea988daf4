"""Drives a Kazoo Counter(support_curator=True).

Arguments: hosts, path.
Commands: "ensure" -> "ensured"; "get" -> "value <v>";
"add N" -> "value <post_value>"; "addmany K" (K times += 1) -> "added K".
Events: "ready", "error <message>".
"""
import sys

from kazoo.client import KazooClient
from kazoo.retry import KazooRetry
from kazoo_peer import say, serve

zk = KazooClient(hosts=sys.argv[1], timeout=20.0,
                 command_retry=KazooRetry(max_tries=-1, delay=0.01, max_delay=0.2))
zk.start()
counter = zk.Counter(sys.argv[2], support_curator=True)


def ensure(f):
    counter._ensure_node()
    say("ensured")


def get(f):
    say("value", counter.value)


def add(f):
    global counter
    counter += int(f[1])
    say("value", counter.post_value)


def addmany(f):
    global counter
    for _ in range(int(f[1])):
        counter += 1
    say("added", f[1])


serve({"ensure": ensure, "get": get, "add": add, "addmany": addmany})
zk.stop()
