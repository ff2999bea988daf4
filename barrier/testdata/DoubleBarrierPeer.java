import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;

// DoubleBarrierPeer is one member of a Curator DistributedDoubleBarrier,
// and a user of a Curator DistributedBarrier at the same path.
// Arguments: connect string, barrier path, member count.
// Commands on stdin: "enter", "leave" (double barrier); "set", "remove",
// "wait" (simple barrier). Events on stdout: "ready", "entering",
// "entered", "leaving", "left", "set", "removed", "waiting", "waited",
// "error <message>" (see Peer).
public class DoubleBarrierPeer {
    public static void main(String[] args) throws Exception {
        CuratorFramework c = Peer.connect(args[0], 8000);
        DistributedDoubleBarrier b = new DistributedDoubleBarrier(c, args[1], Integer.parseInt(args[2]));
        DistributedBarrier simple = new DistributedBarrier(c, args[1]);
        Peer.serve(f -> {
            switch (f[0]) {
                case "enter":
                    System.out.println("entering");
                    b.enter();
                    System.out.println("entered");
                    return true;
                case "leave":
                    System.out.println("leaving");
                    b.leave();
                    System.out.println("left");
                    return true;
                case "set":
                    simple.setBarrier();
                    System.out.println("set");
                    return true;
                case "remove":
                    simple.removeBarrier();
                    System.out.println("removed");
                    return true;
                case "wait":
                    System.out.println("waiting");
                    simple.waitOnBarrier();
                    System.out.println("waited");
                    return true;
                default:
                    return false;
            }
        });
        c.close();
    }
}
