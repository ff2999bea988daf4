"""Drives a Kazoo Counter(support_curator=True).

Arguments: hosts, path.
Commands: "ensure" -> "ensured"; "get" -> "value <v>";
"add N" -> "value <post_value>"; "addmany K" (K times += 1) -> "added K".
Events: "ready", "error <message>".
"""
import sys

from kazoo.client import KazooClient
from kazoo.retry import KazooRetry

zk = KazooClient(hosts=sys.argv[1], timeout=20.0,
                 command_retry=KazooRetry(max_tries=-1, delay=0.01, max_delay=0.2))
zk.start()
counter = zk.Counter(sys.argv[2], support_curator=True)
print("ready", flush=True)
for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    try:
        if f[0] == "ensure":
            counter._ensure_node()
            print("ensured", flush=True)
        elif f[0] == "get":
            print("value", counter.value, flush=True)
        elif f[0] == "add":
            counter += int(f[1])
            print("value", counter.post_value, flush=True)
        elif f[0] == "addmany":
            for _ in range(int(f[1])):
                counter += 1
            print("added", f[1], flush=True)
        else:
            print("error unknown command", line.strip(), flush=True)
    except Exception as e:  # report, keep serving
        print("error", repr(e), flush=True)
zk.stop()
