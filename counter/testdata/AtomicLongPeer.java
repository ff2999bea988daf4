import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;
import java.io.BufferedReader;
import java.io.InputStreamReader;

// AtomicLongPeer drives a Curator DistributedAtomicLong.
// Arguments: connect string, path.
// Commands: "get" -> "value <n>"; "add K" (K increments) -> "added K".
// Events: "ready", "error <message>".
public class AtomicLongPeer {
    public static void main(String[] args) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(args[0], 20000, 8000,
                new ExponentialBackoffRetry(100, 5));
        c.start();
        c.blockUntilConnected();
        DistributedAtomicLong n = new DistributedAtomicLong(c, args[1], new RetryNTimes(1000, 1));
        System.out.println("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split(" ");
            try {
                switch (f[0]) {
                    case "get":
                        System.out.println("value " + n.get().postValue());
                        break;
                    case "add":
                        int k = Integer.parseInt(f[1]);
                        for (int i = 0; i < k; i++) {
                            AtomicValue<Long> v = n.increment();
                            if (!v.succeeded()) {
                                throw new IllegalStateException("increment did not succeed");
                            }
                        }
                        System.out.println("added " + k);
                        break;
                    default:
                        System.out.println("error unknown command " + f[0]);
                }
            } catch (Exception e) {
                System.out.println("error " + e);
            }
        }
        c.close();
    }
}
