import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.retry.ExponentialBackoffRetry;
import java.io.BufferedReader;
import java.io.InputStreamReader;

// DoubleBarrierPeer is one member of a Curator DistributedDoubleBarrier,
// and a user of a Curator DistributedBarrier at the same path.
// Arguments: connect string, barrier path, member count.
// Commands on stdin: "enter", "leave" (double barrier); "set", "remove",
// "wait" (simple barrier). Events on stdout: "ready", "entering",
// "entered", "leaving", "left", "set", "removed", "waiting", "waited",
// "error <message>".
public class DoubleBarrierPeer {
    public static void main(String[] args) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(args[0], 8000, 8000,
                new ExponentialBackoffRetry(100, 5));
        c.start();
        c.blockUntilConnected();
        DistributedDoubleBarrier b = new DistributedDoubleBarrier(c, args[1], Integer.parseInt(args[2]));
        DistributedBarrier simple = new DistributedBarrier(c, args[1]);
        System.out.println("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            try {
                switch (line.trim()) {
                    case "enter":
                        System.out.println("entering");
                        b.enter();
                        System.out.println("entered");
                        break;
                    case "leave":
                        System.out.println("leaving");
                        b.leave();
                        System.out.println("left");
                        break;
                    case "set":
                        simple.setBarrier();
                        System.out.println("set");
                        break;
                    case "remove":
                        simple.removeBarrier();
                        System.out.println("removed");
                        break;
                    case "wait":
                        System.out.println("waiting");
                        simple.waitOnBarrier();
                        System.out.println("waited");
                        break;
                    default:
                        System.out.println("error unknown command " + line);
                }
            } catch (Exception e) {
                System.out.println("error " + e);
            }
        }
        c.close();
    }
}
