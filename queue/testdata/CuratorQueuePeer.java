import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.DistributedDelayQueue;
import org.apache.curator.framework.recipes.queue.DistributedIdQueue;
import org.apache.curator.framework.recipes.queue.DistributedPriorityQueue;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.MultiItem;
import org.apache.curator.framework.recipes.queue.QueueBase;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.state.ConnectionState;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.Semaphore;

// CuratorQueuePeer drives Curator's queues. Argument: connect string.
// Items are UTF-8 strings without spaces (the serializer passes bytes
// through).
//
// Commands:
//   open NAME KIND PATH LOCK ROLE   KIND queue|priority|delay|id; LOCK a lock
//                                   path or "-"; ROLE produce or consume
//                                   -> "opened NAME"
//   put NAME ITEM [ARG]             ARG a priority, a due time in epoch
//                                   millis, or an id -> "put"
//   putmulti NAME A,B,C [ARG]       one node holding A, B and C -> "put"
//   remove NAME ID                  (id queue) -> "removed N"
//   close NAME                      -> "closed NAME"
//   unhold                          lets a consumer holding an item go on
//   offer PATH ITEM                 (SimpleDistributedQueue) -> "offered"
//   poll PATH | take PATH | peek PATH -> "polled|took|peeked ITEM|none"
// Events: "ready"; a consumer prints "consumed NAME ITEM MILLIS" for each
// item it consumed; an item starting with "hold" is held (its lock kept,
// with a lock path) until "unhold", after printing "holding NAME ITEM".
public class CuratorQueuePeer {
    static final QueueSerializer<byte[]> BYTES = new QueueSerializer<byte[]>() {
        public byte[] serialize(byte[] item) { return item; }
        public byte[] deserialize(byte[] bytes) { return bytes; }
    };
    static final Semaphore unhold = new Semaphore(0);

    static QueueConsumer<byte[]> consumer(String name) {
        return new QueueConsumer<byte[]>() {
            public void consumeMessage(byte[] message) throws Exception {
                String s = new String(message, StandardCharsets.UTF_8);
                if (s.startsWith("hold")) {
                    System.out.println("holding " + name + " " + s);
                    unhold.acquire();
                }
                System.out.println("consumed " + name + " " + s + " " + System.currentTimeMillis());
            }
            public void stateChanged(CuratorFramework c, ConnectionState s) {}
        };
    }

    static MultiItem<byte[]> multi(String csv) {
        Iterator<String> it = Arrays.asList(csv.split(",")).iterator();
        return () -> it.hasNext() ? it.next().getBytes(StandardCharsets.UTF_8) : null;
    }

    public static void main(String[] args) throws Exception {
        CuratorFramework c = Peer.connect(args[0], 20000);
        Map<String, QueueBase<byte[]>> queues = new HashMap<>();
        Peer.serve(f -> {
            switch (f[0]) {
                case "open": {
                    QueueConsumer<byte[]> cons = f[5].equals("consume") ? consumer(f[1]) : null;
                    QueueBuilder<byte[]> b = QueueBuilder.builder(c, cons, BYTES, f[3]).putInBackground(false);
                    if (!f[4].equals("-")) {
                        b = b.lockPath(f[4]);
                    }
                    QueueBase<byte[]> q;
                    switch (f[2]) {
                        case "queue": q = b.buildQueue(); break;
                        case "priority": q = b.buildPriorityQueue(0); break;
                        case "delay": q = b.buildDelayQueue(); break;
                        case "id": q = b.buildIdQueue(); break;
                        default: return false;
                    }
                    q.start();
                    queues.put(f[1], q);
                    System.out.println("opened " + f[1]);
                    return true;
                }
                case "put":
                case "putmulti": {
                    QueueBase<byte[]> q = queues.get(f[1]);
                    boolean many = f[0].equals("putmulti");
                    byte[] item = f[2].getBytes(StandardCharsets.UTF_8);
                    if (q instanceof DistributedQueue) {
                        DistributedQueue<byte[]> d = (DistributedQueue<byte[]>) q;
                        if (many) d.putMulti(multi(f[2])); else d.put(item);
                    } else if (q instanceof DistributedPriorityQueue) {
                        DistributedPriorityQueue<byte[]> d = (DistributedPriorityQueue<byte[]>) q;
                        int p = Integer.parseInt(f[3]);
                        if (many) d.putMulti(multi(f[2]), p); else d.put(item, p);
                    } else if (q instanceof DistributedDelayQueue) {
                        DistributedDelayQueue<byte[]> d = (DistributedDelayQueue<byte[]>) q;
                        long due = Long.parseLong(f[3]);
                        if (many) d.putMulti(multi(f[2]), due); else d.put(item, due);
                    } else {
                        ((DistributedIdQueue<byte[]>) q).put(item, f[3]);
                    }
                    System.out.println("put");
                    return true;
                }
                case "remove":
                    System.out.println("removed " + ((DistributedIdQueue<byte[]>) queues.get(f[1])).remove(f[2]));
                    return true;
                case "close":
                    queues.remove(f[1]).close();
                    System.out.println("closed " + f[1]);
                    return true;
                case "unhold":
                    unhold.release();
                    return true;
                case "offer":
                    new SimpleDistributedQueue(c, f[1]).offer(f[2].getBytes(StandardCharsets.UTF_8));
                    System.out.println("offered");
                    return true;
                case "poll":
                case "take":
                case "peek": {
                    SimpleDistributedQueue s = new SimpleDistributedQueue(c, f[1]);
                    byte[] got = f[0].equals("poll") ? s.poll() : f[0].equals("take") ? s.take() : s.peek();
                    String word = f[0].equals("poll") ? "polled" : f[0].equals("take") ? "took" : "peeked";
                    System.out.println(word + " " + (got == null ? "none" : new String(got, StandardCharsets.UTF_8)));
                    return true;
                }
                default:
                    return false;
            }
        });
        c.close();
    }
}
