"""Drives Kazoo's Lock for interoperability tests.

Usage: kazoo_locks.py <connect string>. Prints "ready", then runs each
command line "<tag> <command> <args...>" on a thread of its own and answers
with lines starting with the same tag:

  T loop PATH THREADS ROUNDS CHECKER  -> T done ENTRIES VIOLATIONS
  T hold PATH                         -> T held NODE
  T release                           -> T released
  T try PATH                          -> T tried true|false
  T semloop PATH MAX THREADS ROUNDS CHECKER -> T done ENTRIES VIOLATIONS
  T semhold PATH MAX                  -> T held NODE
  T semtry PATH MAX                   -> T tried true|false

The sem commands drive Kazoo's Semaphore with MAX leases.

Kazoo names its own nodes "<uuid hex>__lock__<seq>"; with
extra_lock_patterns=["-lock-"] it also treats Curator-style
"..-lock-<seq>" nodes as contenders. Every holder in a loop records its
entry and exit in the CHECKER node with version-checked writes (the
protocol of CuratorLocks.java), so overlapping holders are detected.
"""
import random
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError

zk = KazooClient(hosts=sys.argv[1], timeout=10.0)
zk.start()
out_lock = threading.Lock()
releases = {}


def out(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def new_lock(path):
    return zk.Lock(path, "kazoo", extra_lock_patterns=["-lock-"])


def check_enter(checker, ident):
    bad = []
    data, st = zk.get(checker)
    if data:
        bad.append("entered while the checker says " + data.decode())
    try:
        zk.set(checker, ("W" + ident).encode(), version=st.version)
    except BadVersionError:
        bad.append("checker changed while entering")
    return bad


def check_exit(checker, ident):
    bad = []
    data, st = zk.get(checker)
    if data.decode() != "W" + ident:
        bad.append("leaving while the checker says " + data.decode())
    try:
        zk.set(checker, b"", version=st.version)
    except BadVersionError:
        bad.append("checker changed while leaving")
    return bad


def sem_enter(checker, ident, max_leases):
    bad = []
    while True:
        data, st = zk.get(checker)
        s = data.decode()
        n = 0
        if s.startswith("S"):
            n = int(s[1:])
        elif s:
            return bad + ["entered while the checker says " + s]
        if n + 1 > max_leases:
            bad.append("lease %d of %d" % (n + 1, max_leases))
        try:
            zk.set(checker, ("S%d" % (n + 1)).encode(), version=st.version)
            return bad
        except BadVersionError:
            pass


def sem_exit(checker, ident):
    while True:
        data, st = zk.get(checker)
        s = data.decode()
        if not s.startswith("S"):
            return ["leaving while the checker says " + s]
        n = int(s[1:])
        try:
            zk.set(checker, b"" if n == 1 else ("S%d" % (n - 1)).encode(), version=st.version)
            return []
        except BadVersionError:
            pass


def new_sem(path, max_leases):
    return zk.Semaphore(path, "kazoo", max_leases=max_leases)


def loop(tag, path, threads, rounds, checker, max_leases=None):
    counts = {"entries": 0, "violations": 0}
    mu = threading.Lock()

    def worker(i):
        try:
            for r in range(rounds):
                ident = "%s-%d-%d" % (tag, i, r)
                if max_leases is None:
                    lk = new_lock(path)
                    lk.acquire()
                    bad = check_enter(checker, ident)
                    time.sleep(random.random() * 0.002)
                    bad += check_exit(checker, ident)
                else:
                    lk = new_sem(path, max_leases)
                    lk.acquire()
                    bad = sem_enter(checker, ident, max_leases)
                    time.sleep(random.random() * 0.002)
                    bad += sem_exit(checker, ident)
                lk.release()
                for b in bad:
                    out("%s violation %s: %s" % (tag, ident, b))
                with mu:
                    counts["entries"] += 1
                    counts["violations"] += len(bad)
        except Exception as e:  # reported, then the test fails
            out("%s error %r" % (tag, e))

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out("%s done %d %d" % (tag, counts["entries"], counts["violations"]))


def hold(tag, path):
    ev = threading.Event()
    releases[tag] = ev
    lk = new_lock(path)
    lk.acquire()
    out("%s held %s" % (tag, lk.node))
    ev.wait()
    lk.release()
    out("%s released" % tag)


def sem_hold(tag, path, max_leases):
    ev = threading.Event()
    releases[tag] = ev
    sem = new_sem(path, max_leases)
    sem.acquire()
    out("%s held %s" % (tag, sem.create_path))
    ev.wait()
    sem.release()
    out("%s released" % tag)


def try_lock(tag, path, max_leases=None):
    lk = new_lock(path) if max_leases is None else new_sem(path, max_leases)
    ok = lk.acquire(blocking=False)
    if ok:
        lk.release()
    out("%s tried %s" % (tag, "true" if ok else "false"))


def run(f):
    tag, cmd = f[0], f[1]
    try:
        if cmd == "loop":
            loop(tag, f[2], int(f[3]), int(f[4]), f[5])
        elif cmd == "hold":
            hold(tag, f[2])
        elif cmd == "try":
            try_lock(tag, f[2])
        elif cmd == "semloop":
            loop(tag, f[2], int(f[4]), int(f[5]), f[6], max_leases=int(f[3]))
        elif cmd == "semhold":
            sem_hold(tag, f[2], int(f[3]))
        elif cmd == "semtry":
            try_lock(tag, f[2], int(f[3]))
        else:
            out("%s error unknown command %s" % (tag, cmd))
    except Exception as e:
        out("%s error %r" % (tag, e))


out("ready")
for line in sys.stdin:
    f = line.split()
    if len(f) < 2:
        continue
    if f[1] == "release":
        ev = releases.get(f[0])
        if ev:
            ev.set()
        continue
    threading.Thread(target=run, args=(f,), daemon=True).start()
zk.stop()
