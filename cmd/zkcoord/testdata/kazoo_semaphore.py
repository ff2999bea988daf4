"""A Kazoo Semaphore beside zkcoord lock --kazoo.

Usage: kazoo_semaphore.py CONNECT PATH MAX

  try       -> tried True|False   (a lease without waiting)
  release   -> released
"""
import sys

from kazoo.client import KazooClient
from kazoo_peer import say, serve

zk = KazooClient(hosts=sys.argv[1])
zk.start()
sem = zk.Semaphore(sys.argv[2], max_leases=int(sys.argv[3]), identifier="kazoo")


def try_acquire(_):
    say("tried", sem.acquire(blocking=False))


def release(_):
    sem.release()
    say("released")


serve({"try": try_acquire, "release": release})
