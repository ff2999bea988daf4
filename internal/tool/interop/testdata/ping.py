"""Connects with Kazoo, then answers "create PATH" with "created PATH"."""
import sys

from kazoo.client import KazooClient

zk = KazooClient(hosts=sys.argv[1])
zk.start()
print("ready", flush=True)
for line in sys.stdin:
    f = line.split()
    if f and f[0] == "create":
        zk.create(f[1], makepath=True)
        print("created", f[1], flush=True)
zk.stop()
