import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/*
 * CuratorLocks drives Curator's lock recipes for interoperability tests.
 * Usage: CuratorLocks <connect string, or - for sort only>. It prints
 * "ready", then runs each
 * command line "<tag> <command> <args...>" on a thread of its own and
 * answers with lines starting with the same tag:
 *
 *   T loop KIND PATH MAX THREADS ROUNDS CHECKER  -> T done ENTRIES VIOLATIONS
 *   T hold KIND PATH MAX                         -> T held NODE
 *   T holdn PATH MAX QTY                         -> T held NODE,NODE...
 *                                                   (QTY semaphore leases)
 *   T release                                    -> T released
 *   T try KIND PATH MAX                          -> T tried true|false
 *   T sort LOCKNAME NAME...                      -> T sorted NAME...
 *   T sortrw NAME...                             -> T sorted NAME...
 *   T holdrevocable PATH                         -> T held NODE, then
 *                                                   T revoked when asked
 *   T revoke NODEPATH                            -> T revokesent
 *   T setcount PATH VALUE                        -> T set
 *                                                   (SharedCount.setCount)
 *
 * KIND is mutex, read, write, sem or semlimit (MAX matters for the
 * semaphores only). A semlimit semaphore reads its limit from the
 * SharedCount at PATH-limit, seeded with MAX. Every holder
 * in a loop records its entry and exit in the CHECKER node with
 * version-checked writes, so that any overlap of holders that must exclude
 * each other is detected: see Checker.
 */
public class CuratorLocks {
    static CuratorFramework client;
    static final Map<String, CountDownLatch> releases = new ConcurrentHashMap<>();
    static final Map<String, SharedCount> counts = new ConcurrentHashMap<>();

    static synchronized void out(String s) {
        System.out.println(s);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        if (!args[0].equals("-")) { // "-": no ZooKeeper, for sort only
            connect(args[0]);
        }
        out("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 2) {
                continue;
            }
            String tag = f[0];
            if (f[1].equals("release")) {
                CountDownLatch l = releases.get(tag);
                if (l != null) {
                    l.countDown();
                }
                continue;
            }
            if (f[1].startsWith("sort")) { // answered in order, on this thread
                run(tag, f);
                continue;
            }
            Thread t = new Thread(() -> {
                try {
                    run(tag, f);
                } catch (Throwable e) {
                    out(tag + " error " + e.toString().replace('\n', ' '));
                }
            });
            t.setDaemon(true);
            t.start();
        }
        if (client != null) {
            client.close();
        }
    }

    static void connect(String hosts) throws Exception {
        client = CuratorFrameworkFactory.builder()
                .connectString(hosts)
                .sessionTimeoutMs(10000)
                .connectionTimeoutMs(10000)
                .retryPolicy(new RetryNTimes(50, 100))
                .build();
        client.start();
        client.blockUntilConnected();
    }

    /** One contender of one kind; a new one per acquisition. */
    interface Holder {
        void acquire() throws Exception;

        boolean tryAcquire() throws Exception;

        void release() throws Exception;

        String node();
    }

    static Holder holder(String kind, String path, int max) {
        switch (kind) {
            case "mutex":
                return mutexHolder(new InterProcessMutex(client, path));
            case "read":
                return mutexHolder(new InterProcessReadWriteLock(client, path).readLock());
            case "write":
                return mutexHolder(new InterProcessReadWriteLock(client, path).writeLock());
            case "sem":
            case "semlimit":
                InterProcessSemaphoreV2 s = kind.equals("sem")
                        ? new InterProcessSemaphoreV2(client, path, max)
                        : new InterProcessSemaphoreV2(client, path, count(path + "-limit", max));
                return new Holder() {
                    Lease lease;

                    public void acquire() throws Exception {
                        lease = s.acquire();
                    }

                    public boolean tryAcquire() throws Exception {
                        lease = s.acquire(0, TimeUnit.MILLISECONDS);
                        return lease != null;
                    }

                    public void release() throws Exception {
                        lease.close();
                    }

                    public String node() {
                        return lease.getNodeName();
                    }
                };
            default:
                throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    // count returns the started SharedCount at path, one per path.
    static SharedCount count(String path, int seed) {
        return counts.computeIfAbsent(path, p -> {
            SharedCount c = new SharedCount(client, p, seed);
            try {
                c.start();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return c;
        });
    }

    static Holder mutexHolder(InterProcessMutex m) {
        return new Holder() {
            public void acquire() throws Exception {
                m.acquire();
            }

            public boolean tryAcquire() throws Exception {
                return m.acquire(0, TimeUnit.MILLISECONDS);
            }

            public void release() throws Exception {
                m.release();
            }

            public String node() {
                try { // protected in Curator 5.4
                    java.lang.reflect.Method p = InterProcessMutex.class.getDeclaredMethod("getLockPath");
                    p.setAccessible(true);
                    return (String) p.invoke(m);
                } catch (ReflectiveOperationException e) {
                    return "?";
                }
            }
        };
    }

    static void run(String tag, String[] f) throws Exception {
        switch (f[1]) {
            case "loop": {
                String kind = f[2], path = f[3], checker = f[7];
                int max = Integer.parseInt(f[4]), threads = Integer.parseInt(f[5]), rounds = Integer.parseInt(f[6]);
                AtomicInteger entries = new AtomicInteger(), violations = new AtomicInteger();
                List<Thread> ts = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    String id = tag + "-" + i;
                    Thread t = new Thread(() -> {
                        try {
                            for (int r = 0; r < rounds; r++) {
                                Holder h = holder(kind, path, max);
                                h.acquire();
                                Checker c = new Checker(checker, kind, max, id + "-" + r);
                                c.enter();
                                Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                                c.exit();
                                h.release();
                                entries.incrementAndGet();
                                violations.addAndGet(c.violations);
                                for (String v : c.messages) {
                                    out(tag + " violation " + v);
                                }
                            }
                        } catch (Throwable e) {
                            out(tag + " error " + e.toString().replace('\n', ' '));
                        }
                    });
                    ts.add(t);
                    t.start();
                }
                for (Thread t : ts) {
                    t.join();
                }
                out(tag + " done " + entries.get() + " " + violations.get());
                break;
            }
            case "hold":
                hold(tag, holder(f[2], f[3], Integer.parseInt(f[4])));
                break;
            case "holdn": { // InterProcessSemaphoreV2.acquire(qty)
                InterProcessSemaphoreV2 s = new InterProcessSemaphoreV2(client, f[2], Integer.parseInt(f[3]));
                CountDownLatch release = new CountDownLatch(1);
                releases.put(tag, release);
                Collection<Lease> leases = s.acquire(Integer.parseInt(f[4]));
                List<String> names = new ArrayList<>();
                for (Lease l : leases) {
                    names.add(l.getNodeName());
                }
                out(tag + " held " + String.join(",", names));
                release.await();
                s.returnAll(leases);
                out(tag + " released");
                break;
            }
            case "holdrevocable": {
                InterProcessMutex m = new InterProcessMutex(client, f[2]);
                m.makeRevocable(lock -> out(tag + " revoked"));
                hold(tag, mutexHolder(m));
                break;
            }
            case "revoke": {
                Revoker.attemptRevoke(client, f[2]);
                out(tag + " revokesent");
                break;
            }
            case "setcount": {
                SharedCount c = new SharedCount(client, f[2], 0);
                c.start();
                c.setCount(Integer.parseInt(f[3]));
                c.close();
                out(tag + " set");
                break;
            }
            case "try": {
                Holder h = holder(f[2], f[3], Integer.parseInt(f[4]));
                boolean ok = h.tryAcquire();
                if (ok) {
                    h.release();
                }
                out(tag + " tried " + ok);
                break;
            }
            case "sort": {
                String lockName = f[2];
                List<String> names = new ArrayList<>(Arrays.asList(f).subList(3, f.length));
                names.sort((a, b) -> StandardLockInternalsDriver.standardFixForSorting(a, lockName)
                        .compareTo(StandardLockInternalsDriver.standardFixForSorting(b, lockName)));
                out(tag + " sorted " + String.join(" ", names));
                break;
            }
            case "sortrw": { // as InterProcessReadWriteLock's driver sorts
                List<String> names = new ArrayList<>(Arrays.asList(f).subList(2, f.length));
                names.sort((a, b) -> rwKey(a).compareTo(rwKey(b)));
                out(tag + " sorted " + String.join(" ", names));
                break;
            }
            default:
                out(tag + " error unknown command " + f[1]);
        }
    }

    // hold acquires h, says so, and keeps it until "<tag> release".
    static void hold(String tag, Holder h) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        releases.put(tag, release);
        h.acquire();
        out(tag + " held " + h.node());
        release.await();
        h.release();
        out(tag + " released");
    }

    static String rwKey(String s) {
        s = StandardLockInternalsDriver.standardFixForSorting(s, "__READ__");
        return StandardLockInternalsDriver.standardFixForSorting(s, "__WRIT__");
    }

    /*
     * Checker records holders in one znode with version-checked writes.
     * States: "" (free), "W<id>" (an exclusive holder), "R<n>" (n readers),
     * "S<n>" (n semaphore leases). An exclusive holder must find the node
     * free and change it without interference: anything else means another
     * holder was inside at the same time. Readers and lease holders retry
     * on interference (they may legitimately overlap) but must never find
     * an exclusive holder or more than MAX leases.
     */
    static class Checker {
        final String path, kind, id;
        final int max;
        int violations;
        final List<String> messages = new ArrayList<>();

        Checker(String path, String kind, int max, String id) {
            this.path = path;
            this.kind = kind;
            this.max = max;
            this.id = id;
        }

        void violation(String m) {
            violations++;
            messages.add(id + ": " + m);
        }

        String get(Stat st) throws Exception {
            byte[] d = client.getData().storingStatIn(st).forPath(path);
            return d == null ? "" : new String(d, StandardCharsets.UTF_8);
        }

        boolean set(String v, int version) throws Exception {
            try {
                client.setData().withVersion(version).forPath(path, v.getBytes(StandardCharsets.UTF_8));
                return true;
            } catch (KeeperException.BadVersionException e) {
                return false;
            }
        }

        boolean exclusive() {
            return kind.equals("mutex") || kind.equals("write");
        }

        String prefix() {
            return kind.startsWith("sem") ? "S" : "R";
        }

        void enter() throws Exception {
            if (exclusive()) {
                Stat st = new Stat();
                String s = get(st);
                if (!s.isEmpty()) {
                    violation("entered while the checker says " + s);
                }
                if (!set("W" + id, st.getVersion())) {
                    violation("checker changed while entering");
                }
                return;
            }
            for (; ; ) {
                Stat st = new Stat();
                String s = get(st);
                int n = 0;
                if (s.startsWith(prefix())) {
                    n = Integer.parseInt(s.substring(1));
                } else if (!s.isEmpty()) {
                    violation("entered while the checker says " + s);
                    return;
                }
                if (kind.startsWith("sem") && n + 1 > max) {
                    violation("lease " + (n + 1) + " of " + max);
                }
                if (set(prefix() + (n + 1), st.getVersion())) {
                    return;
                }
            }
        }

        void exit() throws Exception {
            if (exclusive()) {
                Stat st = new Stat();
                String s = get(st);
                if (!s.equals("W" + id)) {
                    violation("leaving while the checker says " + s);
                }
                if (!set("", st.getVersion())) {
                    violation("checker changed while leaving");
                }
                return;
            }
            for (; ; ) {
                Stat st = new Stat();
                String s = get(st);
                if (!s.startsWith(prefix())) {
                    violation("leaving while the checker says " + s);
                    return;
                }
                int n = Integer.parseInt(s.substring(1));
                if (set(n == 1 ? "" : prefix() + (n - 1), st.getVersion())) {
                    return;
                }
            }
        }
    }
}
