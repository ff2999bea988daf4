"""Benchmark workloads run with Kazoo, the way a Python service would use it.

Usage: kazoo_bench.py CONNECT_STRING

Prints "ready", then answers each command line "NAME key=value ..." with one
line: "ok {json}" or "err MESSAGE". The JSON holds "samples" (milliseconds,
measured here with time.perf_counter), "ops" (operations performed) and
"extra" (named numbers). Commands:

  floor path n warm               create+delete of an ephemeral sequential node
  lock path n warm                Lock acquire+release, uncontended
  handoff path sessions n warm    intervals between acquisitions, all contending
  distinct path threads per warm  threads on distinct locks over one client
  elect_setup path n sessions     n Election candidates over sessions clients
  elect_failover changes          the leader returns; time to the next leader
  elect_refill                    replace the candidates that led
  elect_teardown
  part_setup path members items tb
                                  SetPartitioner members (one client each)
  part_join                       one more member; time until all items are owned
  part_leave                      the newest member leaves; same
  part_teardown
  part_wait_external held        wait until the members hold all items but
                                  the held ones of a member in another process
  part_settle                     wait until the members hold every item again:
                                  extra at_us, the wall-clock time in microseconds
  mem path clients                memory per client holding one lock
  queue kind path consumers limit window_ms
                                  consumers threads, each with a client of its
                                  own, take items from a Queue (kind=queue) or
                                  a LockingQueue (kind=locking: get, then
                                  consume) until limit items are taken or the
                                  window is over; one sample, ms per item
  crash_join kind path session_ms [items tb]
                                  a client of its own with that session timeout
                                  runs an Election candidate (kind=elect), waits
                                  for a Lock (kind=lock) or joins a SetPartitioner
                                  (kind=part); this process is the one killed, or
                                  the one taking over
  crash_await                     waits until it leads, holds the lock or has
                                  acquired its partition: extra at_us (wall clock,
                                  microseconds) and held (items)
  cache_client                    opens the client of the next cache_start
  cache_start path                a TreeCache of path on that client: one
                                  sample, ms until its INITIALIZED event
  cache_change paths              sets new data on each node of paths (comma
                                  separated) from the main client, one at a
                                  time: a sample each, ms until the cache's
                                  listener sees the new data
  cache_stop                      closes the cache and its client
"""

import json
import logging
import queue as queuelib
import sys
import threading
import time
import traceback

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError
from kazoo.recipe.cache import TreeCache, TreeEvent

CONNECT = sys.argv[1]
SESSION_TIMEOUT = 30.0

logging.basicConfig(level=logging.CRITICAL)


def new_client():
    c = KazooClient(hosts=CONNECT, timeout=SESSION_TIMEOUT)
    c.start(timeout=60)
    return c


MAIN = None


def ms(seconds):
    return seconds * 1000.0


def result(samples=None, ops=0, extra=None):
    samples = samples or []
    return {"samples": samples, "ops": ops or len(samples), "extra": extra or {}}


def run_threads(target, args, failures, started=None):
    """Runs target(*a) in a thread of its own for each a of args, calls
    started once they have all started, waits for them all and raises the
    first of failures (which the threads append to). Returns what started
    returned."""
    threads = [threading.Thread(target=target, args=a) for a in args]
    for th in threads:
        th.start()
    got = started() if started else None
    for th in threads:
        th.join()
    if failures:
        raise failures[0]
    return got


def ensure(path):
    try:
        MAIN.ensure_path(path)
    except NodeExistsError:
        pass


def floor(path, n, warm):
    ensure(path)
    out = []
    for i in range(warm + n):
        t = time.perf_counter()
        p = MAIN.create(path + "/n-", ephemeral=True, sequence=True)
        MAIN.delete(p)
        if i >= warm:
            out.append(ms(time.perf_counter() - t))
    return result(out, warm + n)


def lock(path, n, warm):
    lk = MAIN.Lock(path, "bench")
    out = []
    for i in range(warm + n):
        t = time.perf_counter()
        lk.acquire()
        lk.release()
        if i >= warm:
            out.append(ms(time.perf_counter() - t))
    return result(out, warm + n)


def handoff(path, sessions, n, warm):
    clients = [new_client() for _ in range(sessions)]
    total = warm + n + 1
    times = []
    acquisitions = [0]
    guard = threading.Lock()
    done = threading.Event()
    failures = []

    def contend(c, i):
        lk = c.Lock(path, "h%d" % i)
        try:
            while not done.is_set():
                lk.acquire()
                try:
                    t = time.perf_counter()
                    with guard:
                        acquisitions[0] += 1
                        if len(times) < total:
                            times.append(t)
                        if len(times) >= total:
                            done.set()
                finally:
                    lk.release()
        except Exception as e:  # pragma: no cover - reported to the driver
            failures.append(e)
            done.set()

    try:
        run_threads(contend, [(c, i) for i, c in enumerate(clients)], failures)
    finally:
        for c in clients:
            c.stop()
            c.close()
    out = [ms(times[i] - times[i - 1]) for i in range(warm + 1, len(times))]
    return result(out, acquisitions[0])


def distinct(path, nthreads, per, warm):
    locks = [MAIN.Lock("%s/l%d" % (path, i), "d%d" % i) for i in range(nthreads)]
    warmed = threading.Barrier(nthreads + 1)
    go = threading.Event()
    lat = [[] for _ in range(nthreads)]
    failures = []

    def work(k):
        try:
            for _ in range(warm):
                locks[k].acquire()
                locks[k].release()
        except Exception as e:
            failures.append(e)
        warmed.wait()
        go.wait()
        if failures:
            return
        try:
            for _ in range(per):
                t = time.perf_counter()
                locks[k].acquire()
                locks[k].release()
                lat[k].append(ms(time.perf_counter() - t))
        except Exception as e:
            failures.append(e)

    def start():
        warmed.wait()
        t = time.perf_counter()
        go.set()
        return t

    t0 = run_threads(work, [(k,) for k in range(nthreads)], failures, start)
    wall = time.perf_counter() - t0
    ops = nthreads * per
    allv = sorted(v for l in lat for v in l)
    # ops counts the warm-up too: its requests are in the counters.
    return result([ms(wall) / ops], nthreads * (per + warm), {"op_p50_ms": allv[len(allv) // 2], "ops_per_s": ops / wall})


# --- Election (Kazoo's leader election is its Lock) ---


class Elections:
    def __init__(self):
        self.clients = []
        self.cands = []  # (election, resign event, thread)
        self.events = None
        self.leader = -1
        self.led = []
        self.path = None

    def add(self):
        idx = len(self.cands)
        c = self.clients[idx % len(self.clients)]
        el = c.Election(self.path, "p%d" % idx)
        resign = threading.Event()
        events = self.events

        def lead():
            events.append((idx, time.perf_counter()))
            with self.cond:
                self.cond.notify_all()
            resign.wait()

        def campaign():
            try:
                el.run(lead)
            except Exception:
                pass  # cancelled at teardown

        th = threading.Thread(target=campaign, daemon=True)
        self.cands.append((el, resign, th))
        th.start()

    def wait_participants(self, n):
        deadline = time.time() + 180
        while len(MAIN.get_children(self.path)) < n:
            if time.time() > deadline:
                raise RuntimeError("participants missing after 3 minutes")
            time.sleep(0.005)

    def next_leader(self, timeout):
        deadline = time.time() + timeout
        with self.cond:
            while not self.events:
                left = deadline - time.time()
                if left <= 0:
                    raise RuntimeError("no new leader within %ss" % timeout)
                self.cond.wait(left)
            return self.events.pop(0)

    def setup(self, path, n, sessions):
        self.teardown()
        self.path = path
        self.n = n
        self.cond = threading.Condition()
        self.events = []
        ensure(path)
        self.clients = [new_client() for _ in range(sessions)]
        for _ in range(n):
            self.add()
        self.wait_participants(n)
        self.leader, _ = self.next_leader(180)
        return result()

    def failover(self, changes):
        out = []
        for _ in range(changes):
            cur = self.leader
            t = time.perf_counter()
            self.cands[cur][1].set()
            idx, t1 = self.next_leader(60)
            out.append(ms(t1 - t))
            self.leader = idx
            self.led.append(cur)
        return result(out)

    def refill(self):
        for _ in self.led:
            self.add()
        self.led = []
        self.wait_participants(self.n)
        return result()

    def teardown(self):
        for el, resign, _ in self.cands:
            el.cancel()
            resign.set()
        for c in self.clients:
            c.stop()
            c.close()
        deadline = time.time() + 30
        for _, _, th in self.cands:
            th.join(max(0.0, deadline - time.time()))
        self.clients, self.cands, self.led = [], [], []
        self.leader = -1
        return result()


ELECTIONS = Elections()


# --- SetPartitioner ---


class Member:
    """One SetPartitioner and the thread that drives it, as an application
    would: release when told to, wait while allocating, work when acquired."""

    def __init__(self, group, client, ident):
        self.group = group
        self.client = client
        self.ident = ident
        self.event = threading.Event()
        self.held = frozenset()
        self.acquired_at = 0.0
        self.acquired_wall = 0
        self.stopping = False
        self.part = None
        self.thread = None

    def join(self):
        g = self.group
        self.part = self.client.SetPartitioner(
            g.path, set=g.items, identifier=self.ident,
            time_boundary=g.tb, state_change_event=self.event)
        self.thread = threading.Thread(target=self.drive, daemon=True)
        self.thread.start()

    def drive(self):
        g = self.group
        p = self.part
        while not self.stopping:
            self.event.clear()
            if p.failed:
                break
            if p.release:
                g.released(self, len(self.held))
                self.held = frozenset()
                p.release_set()
                continue
            if p.acquired:
                if not self.held:
                    self.held = frozenset(p)
                    self.acquired_at = time.perf_counter()
                    self.acquired_wall = time.time_ns() // 1000
                    g.changed()
            self.event.wait(1.0)

    def leave(self):
        self.stopping = True
        self.event.set()
        self.thread.join()
        self.group.released(self, len(self.held))
        self.held = frozenset()
        self.part.finish()


class Group:
    def __init__(self):
        self.members = []
        self.clients = []
        self.spare = None
        self.cond = threading.Condition()
        self.paused = 0

    def released(self, member, n):
        with self.cond:
            self.paused += n
            self.cond.notify_all()

    def changed(self):
        with self.cond:
            self.cond.notify_all()

    def settled(self, external=0, wall=False):
        """Every member holds its items and together they hold every item
        but external ones exactly once; returns the time the last one
        acquired (perf_counter, or wall-clock microseconds), or None."""
        total = 0
        seen = set()
        last = 0.0
        for m in self.members:
            if not m.held or not m.part.acquired:
                return None
            total += len(m.held)
            seen |= m.held
            last = max(last, m.acquired_wall if wall else m.acquired_at)
        want = len(self.items) - external
        if total != want or len(seen) != want:
            return None
        return last

    def wait_settled(self, timeout, external=0, wall=False):
        deadline = time.time() + timeout
        with self.cond:
            while True:
                t = self.settled(external, wall)
                if t is not None:
                    return t
                left = deadline - time.time()
                if left <= 0:
                    raise RuntimeError("members did not settle within %ss" % timeout)
                self.cond.wait(min(left, 0.05))

    def setup(self, path, members, items, tb):
        self.teardown()
        self.path = path
        self.items = ["r%05d" % i for i in range(items)]
        self.tb = tb
        self.members = []
        self.clients = [new_client() for _ in range(members)]
        self.spare = new_client()
        for i, c in enumerate(self.clients):
            m = Member(self, c, "m%05d" % i)
            self.members.append(m)
            m.join()
        self.wait_settled(600)
        return result()

    def join(self):
        m = Member(self, self.spare, "m%05d" % len(self.clients))
        return self.timed_change(lambda: self.members.append(m), m.join)

    def leave(self):
        m = self.members[-1]
        return self.timed_change(lambda: self.members.remove(m), m.leave)

    def timed_change(self, update, act):
        """Times a change of membership: update (under the lock) the list
        of members, act (join or leave), until the group has settled."""
        with self.cond:
            self.paused = 0
        t = time.perf_counter()
        with self.cond:
            update()
        act()
        t1 = self.wait_settled(600)
        return result([ms(t1 - t)], 1, {"paused": self.paused})

    def teardown(self):
        for m in self.members:
            m.stopping = True
            m.event.set()
        for c in self.clients + ([self.spare] if self.spare else []):
            c.stop()
            c.close()
        self.members, self.clients, self.spare = [], [], None
        return result()


GROUP = Group()


# --- crash: this process is one participant ---


class Crash:
    def __init__(self):
        self.acted = threading.Event()
        self.at = None
        self.held = 0
        self.err = None

    def acts(self, held=0):
        if self.at is None:
            self.at = time.time_ns() // 1000
            self.held = held
        self.acted.set()

    def join(self, kind, path, session_ms, items=0, tb=0.0):
        c = KazooClient(hosts=CONNECT, timeout=session_ms / 1000.0)
        c.start(timeout=60)
        if kind == "elect":
            el = c.Election(path, "crash")

            def lead():
                self.acts()
                threading.Event().wait()

            target = lambda: el.run(lead)
        elif kind == "lock":
            lk = c.Lock(path, "crash")

            def target():
                lk.acquire()
                self.acts()
        elif kind == "part":
            event = threading.Event()
            p = c.SetPartitioner(path, set=["r%05d" % i for i in range(items)], identifier="crash",
                                 time_boundary=tb, state_change_event=event)

            def target():
                while not p.failed:
                    event.clear()
                    if p.release:
                        p.release_set()
                        continue
                    if p.acquired:
                        self.acts(len(list(p)))
                    event.wait(1.0)
        else:
            raise ValueError("unknown kind " + kind)

        def run():
            try:
                target()
            except Exception as e:
                self.err = e
                self.acted.set()

        threading.Thread(target=run, daemon=True).start()
        return result()

    def wait(self):
        if not self.acted.wait(600):
            raise RuntimeError("did not act within 10 minutes")
        if self.err is not None:
            raise self.err
        return result([], 1, {"at_us": float(self.at), "held": float(self.held)})


CRASH = Crash()


# --- memory ---


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def mem(path, n):
    import gc
    for i in range(3):
        c = new_client()
        lk = c.Lock("%s/warm%d" % (path, i), "w")
        lk.acquire()
        lk.release()
        c.stop()
        c.close()
    gc.collect()
    rss0 = rss_kib()
    threads0 = threading.active_count()
    held = []
    for i in range(n):
        c = new_client()
        lk = c.Lock("%s/l%d" % (path, i), "m%d" % i)
        lk.acquire()
        held.append((c, lk))
    gc.collect()
    rss1 = rss_kib()
    threads1 = threading.active_count()
    for c, lk in held:
        lk.release()
        c.stop()
        c.close()
    return result([], n, {"clients": n, "rss_kib_per_client": (rss1 - rss0) / n,
                          "threads_per_client": (threads1 - threads0) / n})


CONSUMERS = []


def consumer_clients(n):
    """Clients kept from one queue command to the next, one per consumer."""
    while len(CONSUMERS) < n:
        CONSUMERS.append(new_client())
    return CONSUMERS[:n]


def queue(kind, path, consumers, limit, window_ms):
    clients = consumer_clients(consumers)
    guard = threading.Lock()
    count = [0, 0]  # reserved, taken
    failures = []

    def consume(c):
        if kind == "queue":
            q = c.Queue(path)

            def take():
                return q.get() is not None
        elif kind == "locking":
            q = c.LockingQueue(path)

            def take():
                if q.get(0) is None:
                    return False
                return q.consume()
        else:
            raise ValueError("unknown queue kind " + kind)
        try:
            while time.perf_counter() < deadline:
                with guard:
                    if count[0] >= limit:
                        return
                    count[0] += 1
                ok = take()
                with guard:
                    if ok:
                        count[1] += 1
                    else:
                        count[0] -= 1
        except Exception as e:  # noqa: BLE001 - reported to the driver
            failures.append(e)

    start = time.perf_counter()
    deadline = start + window_ms / 1000.0
    run_threads(consume, [(c,) for c in clients], failures)
    elapsed = time.perf_counter() - start
    taken = count[1]
    if taken == 0:
        raise RuntimeError("no item taken in %.0f ms" % ms(elapsed))
    return result([ms(elapsed) / taken], taken, {"items_per_s": taken / elapsed})


class Caches:
    """The cache workload's client, cache and the changes it saw."""

    def __init__(self):
        self.client = None
        self.cache = None
        self.changes = queuelib.Queue()

    def new_client(self):
        self.stop()
        self.client = new_client()
        return result()

    def start(self, path):
        if self.client is None:
            raise RuntimeError("cache_start without cache_client")
        self.changes = queuelib.Queue()
        initialized = threading.Event()
        nodes = [0]
        changes = self.changes

        def listener(event):
            if event.event_type == TreeEvent.NODE_ADDED:
                nodes[0] += 1
            elif event.event_type == TreeEvent.NODE_UPDATED:
                changes.put(event.event_data)
            elif event.event_type == TreeEvent.INITIALIZED:
                initialized.set()

        t = time.perf_counter()
        self.cache = TreeCache(self.client, path)
        self.cache.listen(listener)
        self.cache.start()
        if not initialized.wait(600):
            raise RuntimeError("TreeCache not initialized after 10 minutes")
        elapsed = time.perf_counter() - t
        return result([ms(elapsed)], 1, {"nodes": float(nodes[0])})

    def change(self, paths):
        out = []
        for p in paths:
            data = ("v-%d" % time.perf_counter_ns()).encode()
            t = time.perf_counter()
            MAIN.set(p, data)
            while True:
                d = self.changes.get(timeout=60)
                if d.path == p and d.data == data:
                    break
            out.append(ms(time.perf_counter() - t))
        return result(out)

    def stop(self):
        if self.cache is not None:
            self.cache.close()
            self.cache = None
        if self.client is not None:
            self.client.stop()
            self.client.close()
            self.client = None
        return result()


CACHES = Caches()


def run(cmd, a):
    i = lambda k: int(a[k])
    if cmd == "floor":
        return floor(a["path"], i("n"), i("warm"))
    if cmd == "lock":
        return lock(a["path"], i("n"), i("warm"))
    if cmd == "handoff":
        return handoff(a["path"], i("sessions"), i("n"), i("warm"))
    if cmd == "distinct":
        return distinct(a["path"], i("threads"), i("per"), i("warm"))
    if cmd == "elect_setup":
        return ELECTIONS.setup(a["path"], i("n"), i("sessions"))
    if cmd == "elect_failover":
        return ELECTIONS.failover(i("changes"))
    if cmd == "elect_refill":
        return ELECTIONS.refill()
    if cmd == "elect_teardown":
        return ELECTIONS.teardown()
    if cmd == "part_setup":
        return GROUP.setup(a["path"], i("members"), i("items"), float(a["tb"]))
    if cmd == "part_join":
        return GROUP.join()
    if cmd == "part_leave":
        return GROUP.leave()
    if cmd == "part_teardown":
        return GROUP.teardown()
    if cmd == "part_wait_external":
        GROUP.wait_settled(600, external=i("held"))
        return result()
    if cmd == "part_settle":
        return result([], 1, {"at_us": float(GROUP.wait_settled(600, wall=True))})
    if cmd == "crash_join":
        return CRASH.join(a["kind"], a["path"], i("session_ms"), int(a.get("items", "0")), float(a.get("tb", "0")))
    if cmd == "crash_await":
        return CRASH.wait()
    if cmd == "mem":
        return mem(a["path"], i("clients"))
    if cmd == "queue":
        return queue(a["kind"], a["path"], i("consumers"), i("limit"), i("window_ms"))
    if cmd == "cache_client":
        return CACHES.new_client()
    if cmd == "cache_start":
        return CACHES.start(a["path"])
    if cmd == "cache_change":
        return CACHES.change(a["paths"].split(","))
    if cmd == "cache_stop":
        return CACHES.stop()
    raise ValueError("unknown command " + cmd)


def main():
    global MAIN
    MAIN = new_client()
    print("ready", flush=True)
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        a = dict(kv.split("=", 1) for kv in f[1:] if "=" in kv)
        try:
            reply = "ok " + json.dumps(run(f[0], a))
        except Exception as e:
            traceback.print_exc()
            reply = "err " + repr(e).replace("\n", " ")
        print(reply, flush=True)
    ELECTIONS.teardown()
    GROUP.teardown()
    CACHES.stop()
    for c in CONSUMERS:
        c.stop()
        c.close()
    MAIN.stop()
    MAIN.close()


if __name__ == "__main__":
    main()
