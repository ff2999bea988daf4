import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/*
 * ZkBench runs the benchmark workloads with Apache Curator, the way a Java
 * service would use it. Usage: ZkBench CONNECT_STRING.
 *
 * It prints "ready", then answers each command line "NAME key=value ..."
 * with one line: "ok {json}" or "err MESSAGE". The JSON holds "samples"
 * (milliseconds, measured here with System.nanoTime), "ops" (operations
 * performed) and "extra" (named numbers). Commands:
 *
 *   floor path n warm              create+delete of an ephemeral sequential node
 *   lock path n warm               InterProcessMutex acquire+release, uncontended
 *   handoff path sessions n warm   intervals between acquisitions, all contending
 *   distinct path threads per warm threads on distinct locks over one client
 *   latch_setup path n sessions    n LeaderLatch participants over sessions clients
 *   latch_failover changes         the leader closes its latch; time to the next isLeader
 *   latch_refill                   replace the latches closed by latch_failover
 *   latch_teardown
 *   mem path clients               memory per client holding one lock
 *   crash_join kind path session_ms
 *                                  a client of its own with that session timeout
 *                                  starts a LeaderLatch (kind=latch) or waits for an
 *                                  InterProcessMutex (kind=lock); this process is
 *                                  the one killed, or the one taking over
 *   crash_await                    waits until it leads or holds the lock: extra
 *                                  at_us, the wall-clock time, in microseconds
 *   queue kind path consumers limit window_ms
 *                                  consumers DistributedQueue instances
 *                                  (kind=distributed), each on a client of its
 *                                  own, consume items until limit items are
 *                                  taken or the window is over; one sample, ms
 *                                  per item
 *   cache_client                   opens the client of the next cache_start
 *   cache_start path               a CuratorCache of path on that client: one
 *                                  sample, ms until its initialized event
 *   cache_change paths             sets new data on each node of paths (comma
 *                                  separated) from the main client, one at a
 *                                  time: a sample each, ms until the cache's
 *                                  listener sees the new data
 *   cache_stop                     closes the cache and its client
 */
public class ZkBench {
    static String connect;
    static final int SESSION_TIMEOUT_MS = 30000;
    static CuratorFramework main;

    public static void main(String[] args) throws Exception {
        connect = args[0];
        // A queue 100,000 items deep lists in more than the client's default
        // limit of 1 MB per reply; every client of this process may read such
        // listings (set before the first client reads its configuration).
        System.setProperty("jute.maxbuffer", String.valueOf(64 << 20));
        main = newClient();
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 0 || f[0].isEmpty()) {
                continue;
            }
            Map<String, String> a = new HashMap<>();
            for (int i = 1; i < f.length; i++) {
                int eq = f[i].indexOf('=');
                if (eq > 0) {
                    a.put(f[i].substring(0, eq), f[i].substring(eq + 1));
                }
            }
            String reply;
            try {
                reply = "ok " + run(f[0], a).json();
            } catch (Throwable e) {
                reply = "err " + String.valueOf(e).replace('\n', ' ');
            }
            System.out.println(reply);
            System.out.flush();
        }
        latchTeardown();
        cacheStop();
        for (CuratorFramework c : consumers) {
            c.close();
        }
        main.close();
    }

    static Result run(String cmd, Map<String, String> a) throws Exception {
        switch (cmd) {
        case "floor":
            return floor(a.get("path"), num(a, "n"), num(a, "warm"));
        case "lock":
            return lock(a.get("path"), num(a, "n"), num(a, "warm"));
        case "handoff":
            return handoff(a.get("path"), num(a, "sessions"), num(a, "n"), num(a, "warm"));
        case "distinct":
            return distinct(a.get("path"), num(a, "threads"), num(a, "per"), num(a, "warm"));
        case "latch_setup":
            return latchSetup(a.get("path"), num(a, "n"), num(a, "sessions"));
        case "latch_failover":
            return latchFailover(num(a, "changes"));
        case "latch_refill":
            return latchRefill();
        case "latch_teardown":
            latchTeardown();
            return new Result();
        case "mem":
            return mem(a.get("path"), num(a, "clients"));
        case "crash_join":
            return crashJoin(a.get("kind"), a.get("path"), num(a, "session_ms"));
        case "crash_await":
            return crashAwait();
        case "queue":
            return queue(a.get("kind"), a.get("path"), num(a, "consumers"), num(a, "limit"), num(a, "window_ms"));
        case "cache_client":
            cacheStop();
            cacheClient = newClient();
            return new Result();
        case "cache_start":
            return cacheStart(a.get("path"));
        case "cache_change":
            return cacheChange(a.get("paths").split(","));
        case "cache_stop":
            cacheStop();
            return new Result();
        default:
            throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    static int num(Map<String, String> a, String k) {
        String v = a.get(k);
        if (v == null) {
            throw new IllegalArgumentException("missing " + k);
        }
        return Integer.parseInt(v);
    }

    static CuratorFramework newClient() throws Exception {
        return newClient(SESSION_TIMEOUT_MS);
    }

    static CuratorFramework newClient(int sessionTimeoutMs) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(sessionTimeoutMs)
                .connectionTimeoutMs(15000)
                .retryPolicy(new ExponentialBackoffRetry(100, 5))
                .build();
        c.start();
        if (!c.blockUntilConnected(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no connection after 60s");
        }
        return c;
    }

    static void ensure(String path) throws Exception {
        try {
            main.create().creatingParentsIfNeeded().forPath(path);
        } catch (KeeperException.NodeExistsException e) {
            // fine
        }
    }

    static double ms(long ns) {
        return ns / 1e6;
    }

    // floor: the raw cost of one create and one delete through Curator.
    static Result floor(String path, int n, int warm) throws Exception {
        ensure(path);
        Result r = new Result();
        for (int i = 0; i < warm + n; i++) {
            long t = System.nanoTime();
            String p = main.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(path + "/n-");
            main.delete().forPath(p);
            if (i >= warm) {
                r.samples.add(ms(System.nanoTime() - t));
            }
        }
        r.ops = warm + n;
        return r;
    }

    static Result lock(String path, int n, int warm) throws Exception {
        InterProcessMutex m = new InterProcessMutex(main, path);
        Result r = new Result();
        for (int i = 0; i < warm + n; i++) {
            long t = System.nanoTime();
            m.acquire();
            m.release();
            if (i >= warm) {
                r.samples.add(ms(System.nanoTime() - t));
            }
        }
        r.ops = warm + n;
        return r;
    }

    // handoff: sessions clients, one thread each, acquire and release one
    // lock in a loop; the samples are the intervals between consecutive
    // acquisitions (each one a handoff from one holder to the next).
    static Result handoff(String path, int sessions, int n, int warm) throws Exception {
        List<CuratorFramework> clients = new ArrayList<>();
        for (int i = 0; i < sessions; i++) {
            clients.add(newClient());
        }
        long[] times = new long[warm + n + 1];
        int[] count = {0};
        AtomicInteger acquisitions = new AtomicInteger();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (CuratorFramework c : clients) {
            InterProcessMutex m = new InterProcessMutex(c, path);
            Thread th = new Thread(() -> {
                try {
                    while (!done.get()) {
                        m.acquire();
                        try {
                            long t = System.nanoTime();
                            acquisitions.incrementAndGet();
                            synchronized (times) {
                                if (count[0] < times.length) {
                                    times[count[0]++] = t;
                                }
                                if (count[0] >= times.length) {
                                    done.set(true);
                                }
                            }
                        } finally {
                            m.release();
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    done.set(true);
                }
            });
            threads.add(th);
        }
        for (Thread th : threads) {
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        for (CuratorFramework c : clients) {
            c.close();
        }
        if (failure.get() != null) {
            throw new Exception(failure.get());
        }
        Result r = new Result();
        for (int i = warm + 1; i < times.length; i++) {
            r.samples.add(ms(times[i] - times[i - 1]));
        }
        r.ops = acquisitions.get();
        return r;
    }

    // distinct: threads threads share the main client, each with its own
    // lock; after a warm-up they run per acquire+release pairs each. One
    // sample: the wall time of the measured phase per operation.
    static Result distinct(String path, int nThreads, int per, int warm) throws Exception {
        InterProcessMutex[] locks = new InterProcessMutex[nThreads];
        for (int i = 0; i < nThreads; i++) {
            locks[i] = new InterProcessMutex(main, path + "/l" + i);
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch warmed = new CountDownLatch(nThreads);
        CountDownLatch go = new CountDownLatch(1);
        double[][] lat = new double[nThreads][per];
        Thread[] threads = new Thread[nThreads];
        for (int i = 0; i < nThreads; i++) {
            final int k = i;
            threads[i] = new Thread(() -> {
                try {
                    for (int j = 0; j < warm; j++) {
                        locks[k].acquire();
                        locks[k].release();
                    }
                    warmed.countDown();
                    go.await();
                    for (int j = 0; j < per; j++) {
                        long t = System.nanoTime();
                        locks[k].acquire();
                        locks[k].release();
                        lat[k][j] = ms(System.nanoTime() - t);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    warmed.countDown();
                }
            });
            threads[i].start();
        }
        warmed.await();
        long t0 = System.nanoTime();
        go.countDown();
        for (Thread th : threads) {
            th.join();
        }
        long wall = System.nanoTime() - t0;
        if (failure.get() != null) {
            throw new Exception(failure.get());
        }
        int ops = nThreads * per;
        double[] all = new double[ops];
        for (int i = 0; i < nThreads; i++) {
            System.arraycopy(lat[i], 0, all, i * per, per);
        }
        Arrays.sort(all);
        Result r = new Result();
        r.samples.add(ms(wall) / ops);
        r.ops = nThreads * (per + warm); // the requests of the warm-up are counted too
        r.extra.put("op_p50_ms", all[ops / 2]);
        r.extra.put("ops_per_s", ops / (wall / 1e9));
        return r;
    }

    // --- LeaderLatch ---

    static String latchPath;
    static List<CuratorFramework> latchClients = new ArrayList<>();
    static List<LeaderLatch> latches = new ArrayList<>();
    static LinkedBlockingQueue<long[]> leaderEvents = new LinkedBlockingQueue<>();
    static int leader = -1;
    static int latchN;
    static List<Integer> closed = new ArrayList<>();

    static void addLatch() throws Exception {
        final int idx = latches.size();
        LeaderLatch l = new LeaderLatch(latchClients.get(idx % latchClients.size()), latchPath, "p" + idx);
        l.addListener(new LeaderLatchListener() {
            public void isLeader() {
                leaderEvents.add(new long[] {idx, System.nanoTime()});
            }

            public void notLeader() {
            }
        });
        latches.add(l);
        l.start();
    }

    // waitParticipants waits until n latches have their node.
    static void waitParticipants(int n) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (true) {
            int have = 0;
            for (LeaderLatch l : latches) {
                if (l.getState() == LeaderLatch.State.STARTED && l.getOurPath() != null) {
                    have++;
                }
            }
            if (have >= n) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(have + " of " + n + " participants after 3 minutes");
            }
            Thread.sleep(5);
        }
    }

    static Result latchSetup(String path, int n, int sessions) throws Exception {
        latchTeardown();
        latchPath = path;
        latchN = n;
        for (int i = 0; i < sessions; i++) {
            latchClients.add(newClient());
        }
        for (int i = 0; i < n; i++) {
            addLatch();
        }
        waitParticipants(n);
        long[] ev = leaderEvents.poll(3, TimeUnit.MINUTES);
        if (ev == null) {
            throw new IllegalStateException("no leader after 3 minutes");
        }
        leader = (int) ev[0];
        return new Result();
    }

    // latchFailover: the leader closes its latch (graceful); the sample is
    // the time until the next participant's isLeader.
    static Result latchFailover(int changes) throws Exception {
        Result r = new Result();
        for (int i = 0; i < changes; i++) {
            int cur = leader;
            long t = System.nanoTime();
            latches.get(cur).close();
            long[] ev = leaderEvents.poll(60, TimeUnit.SECONDS);
            if (ev == null) {
                throw new IllegalStateException("no new leader within 60s");
            }
            r.samples.add(ms(ev[1] - t));
            leader = (int) ev[0];
            closed.add(cur);
        }
        return r;
    }

    static Result latchRefill() throws Exception {
        for (int i = 0; i < closed.size(); i++) {
            addLatch();
        }
        waitParticipants(latchN);
        closed.clear();
        return new Result();
    }

    static void latchTeardown() throws Exception {
        for (LeaderLatch l : latches) {
            if (l.getState() == LeaderLatch.State.STARTED) {
                l.close();
            }
        }
        for (CuratorFramework c : latchClients) {
            c.close();
        }
        latches.clear();
        latchClients.clear();
        closed.clear();
        leaderEvents.clear();
        leader = -1;
    }

    // --- crash: this process is one participant ---

    static final CountDownLatch crashActed = new CountDownLatch(1);
    static volatile long crashAtUs;
    static volatile Exception crashErr;

    static void crashActs() {
        if (crashAtUs == 0) {
            Instant now = Instant.now();
            crashAtUs = now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
        }
        crashActed.countDown();
    }

    static Result crashJoin(String kind, String path, int sessionMs) throws Exception {
        CuratorFramework c = newClient(sessionMs);
        // A standby has been running for a while: let the JIT see the
        // client's request path before this one takes part.
        ensure(path);
        for (int i = 0; i < 300; i++) {
            c.getChildren().forPath(path);
        }
        switch (kind) {
        case "latch":
            LeaderLatch l = new LeaderLatch(c, path, "crash");
            l.addListener(new LeaderLatchListener() {
                public void isLeader() {
                    crashActs();
                }

                public void notLeader() {
                }
            });
            l.start();
            break;
        case "lock":
            InterProcessMutex m = new InterProcessMutex(c, path);
            Thread t = new Thread(() -> {
                try {
                    m.acquire();
                    crashActs();
                } catch (Exception e) {
                    crashErr = e;
                    crashActed.countDown();
                }
            });
            t.setDaemon(true);
            t.start();
            break;
        default:
            throw new IllegalArgumentException("unknown kind " + kind);
        }
        return new Result();
    }

    static Result crashAwait() throws Exception {
        if (!crashActed.await(10, TimeUnit.MINUTES)) {
            throw new IllegalStateException("did not act within 10 minutes");
        }
        if (crashErr != null) {
            throw crashErr;
        }
        Result r = new Result();
        r.extra.put("at_us", (double) crashAtUs);
        return r;
    }

    // --- memory ---

    static long rssKiB() throws Exception {
        for (String l : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (l.startsWith("VmRSS:")) {
                return Long.parseLong(l.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    static long heapBytes() throws Exception {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    // mem: clients clients, each holding one lock, in this process; the
    // growth of resident memory, heap and threads per client.
    static Result mem(String path, int n) throws Exception {
        // Warm up the classes and code paths first.
        for (int i = 0; i < 3; i++) {
            CuratorFramework c = newClient();
            InterProcessMutex m = new InterProcessMutex(c, path + "/warm" + i);
            m.acquire();
            m.release();
            c.close();
        }
        long heap0 = heapBytes();
        long rss0 = rssKiB();
        int threads0 = Thread.activeCount();
        List<CuratorFramework> clients = new ArrayList<>();
        List<InterProcessMutex> held = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            CuratorFramework c = newClient();
            InterProcessMutex m = new InterProcessMutex(c, path + "/l" + i);
            m.acquire();
            clients.add(c);
            held.add(m);
        }
        long heap1 = heapBytes();
        long rss1 = rssKiB();
        int threads1 = Thread.activeCount();
        for (InterProcessMutex m : held) {
            m.release();
        }
        for (CuratorFramework c : clients) {
            c.close();
        }
        Result r = new Result();
        r.ops = n;
        r.extra.put("clients", (double) n);
        r.extra.put("rss_kib_per_client", (rss1 - rss0) / (double) n);
        r.extra.put("heap_kib_per_client", (heap1 - heap0) / 1024.0 / n);
        r.extra.put("threads_per_client", (threads1 - threads0) / (double) n);
        return r;
    }

    // consumers are the clients of the queue command, kept from one call to
    // the next, one per consumer.
    static List<CuratorFramework> consumers = new ArrayList<>();

    // queue: consumers DistributedQueue instances, each on its own client,
    // consume from path until limit items are taken or the window is over.
    // The queues start inside the window: their first listing is part of
    // the cost, as every other implementation's is.
    static Result queue(String kind, String path, int n, int limit, int windowMs) throws Exception {
        if (!kind.equals("distributed")) {
            throw new IllegalArgumentException("unknown queue kind " + kind);
        }
        while (consumers.size() < n) {
            consumers.add(newClient());
        }
        AtomicInteger taken = new AtomicInteger();
        CountDownLatch enough = new CountDownLatch(1);
        QueueSerializer<byte[]> bytes = new QueueSerializer<byte[]>() {
            public byte[] serialize(byte[] item) {
                return item;
            }

            public byte[] deserialize(byte[] data) {
                return data;
            }
        };
        QueueConsumer<byte[]> consumer = new QueueConsumer<byte[]>() {
            public void consumeMessage(byte[] message) {
                if (taken.incrementAndGet() >= limit) {
                    enough.countDown();
                }
            }

            public void stateChanged(CuratorFramework client, ConnectionState state) {
            }
        };
        List<DistributedQueue<byte[]>> queues = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            DistributedQueue<byte[]> q = QueueBuilder.builder(consumers.get(i), consumer, bytes, path).buildQueue();
            q.start();
            queues.add(q);
        }
        enough.await(windowMs, TimeUnit.MILLISECONDS);
        int count = taken.get();
        long elapsed = System.nanoTime() - t0;
        for (DistributedQueue<byte[]> q : queues) {
            q.close();
        }
        if (count == 0) {
            throw new IllegalStateException("no item taken in " + ms(elapsed) + " ms");
        }
        Result r = new Result();
        r.samples.add(ms(elapsed) / count);
        r.ops = Math.max(count, taken.get()); // items consumed while closing count as work done
        r.extra.put("items_per_s", count / (elapsed / 1e9));
        return r;
    }

    // The cache workload's client, cache and the changes its listener saw.
    static CuratorFramework cacheClient;
    static CuratorCache cache;
    static LinkedBlockingQueue<ChildData> cacheChanges = new LinkedBlockingQueue<>();

    static Result cacheStart(String path) throws Exception {
        if (cacheClient == null) {
            throw new IllegalStateException("cache_start without cache_client");
        }
        cacheChanges.clear();
        CountDownLatch initialized = new CountDownLatch(1);
        AtomicInteger nodes = new AtomicInteger();
        long t0 = System.nanoTime();
        cache = CuratorCache.build(cacheClient, path);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreates(n -> nodes.incrementAndGet())
                .forChanges((before, after) -> cacheChanges.offer(after))
                .forInitialized(initialized::countDown)
                .build());
        cache.start();
        if (!initialized.await(10, TimeUnit.MINUTES)) {
            throw new IllegalStateException("CuratorCache not initialized after 10 minutes");
        }
        long elapsed = System.nanoTime() - t0;
        Result r = new Result();
        r.samples.add(ms(elapsed));
        r.ops = 1;
        r.extra.put("nodes", (double) nodes.get());
        return r;
    }

    static Result cacheChange(String[] paths) throws Exception {
        Result r = new Result();
        for (String p : paths) {
            byte[] data = ("v-" + System.nanoTime()).getBytes(StandardCharsets.UTF_8);
            long t0 = System.nanoTime();
            main.setData().forPath(p, data);
            while (true) {
                ChildData d = cacheChanges.poll(1, TimeUnit.MINUTES);
                if (d == null) {
                    throw new IllegalStateException("no change of " + p + " seen after a minute");
                }
                if (d.getPath().equals(p) && Arrays.equals(d.getData(), data)) {
                    break;
                }
            }
            r.samples.add(ms(System.nanoTime() - t0));
        }
        return r;
    }

    static void cacheStop() {
        if (cache != null) {
            cache.close();
            cache = null;
        }
        if (cacheClient != null) {
            cacheClient.close();
            cacheClient = null;
        }
    }

    // Result is the JSON answer of a command.
    static class Result {
        List<Double> samples = new ArrayList<>();
        int ops;
        Map<String, Double> extra = new LinkedHashMap<>();

        String json() {
            StringBuilder b = new StringBuilder("{\"samples\":[");
            for (int i = 0; i < samples.size(); i++) {
                if (i > 0) {
                    b.append(',');
                }
                b.append(samples.get(i));
            }
            b.append("],\"ops\":").append(ops > 0 ? ops : samples.size()).append(",\"extra\":{");
            int i = 0;
            for (Map.Entry<String, Double> e : extra.entrySet()) {
                if (i++ > 0) {
                    b.append(',');
                }
                b.append('"').append(e.getKey()).append("\":").append(e.getValue());
            }
            return b.append("}}").toString();
        }
    }
}
