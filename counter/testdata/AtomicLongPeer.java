import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.retry.RetryNTimes;

// AtomicLongPeer drives a Curator DistributedAtomicLong.
// Arguments: connect string, path.
// Commands: "get" -> "value <n>"; "add K" (K increments) -> "added K".
// Events: "ready", "error <message>" (see Peer).
public class AtomicLongPeer {
    public static void main(String[] args) throws Exception {
        CuratorFramework c = Peer.connect(args[0], 20000);
        DistributedAtomicLong n = new DistributedAtomicLong(c, args[1], new RetryNTimes(1000, 1));
        Peer.serve(f -> {
            switch (f[0]) {
                case "get":
                    System.out.println("value " + n.get().postValue());
                    return true;
                case "add":
                    int k = Integer.parseInt(f[1]);
                    for (int i = 0; i < k; i++) {
                        AtomicValue<Long> v = n.increment();
                        if (!v.succeeded()) {
                            throw new IllegalStateException("increment did not succeed");
                        }
                    }
                    System.out.println("added " + k);
                    return true;
                default:
                    return false;
            }
        });
        c.close();
    }
}
