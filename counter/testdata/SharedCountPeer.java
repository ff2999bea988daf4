import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;
import java.util.concurrent.atomic.AtomicReference;

// SharedCountPeer drives a Curator SharedCount.
// Arguments: connect string, path, seed.
// Commands: "get" -> "count <value> <version>"; "set N" -> "set N";
// "tryset N" (from the last value seen by "get") -> "tryset true|false";
// "add K" (K increments by trySetCount) -> "added K".
// Events: "ready", "changed <value>", "error <message>" (see Peer).
public class SharedCountPeer {
    public static void main(String[] args) throws Exception {
        CuratorFramework c = Peer.connect(args[0], 20000);
        SharedCount count = new SharedCount(c, args[1], Integer.parseInt(args[2]));
        count.addListener(new SharedCountListener() {
            public void countHasChanged(SharedCountReader r, int n) {
                System.out.println("changed " + n);
            }
            public void stateChanged(CuratorFramework f, ConnectionState s) {}
        });
        count.start();
        // The last value seen by "get", for "tryset".
        AtomicReference<VersionedValue<Integer>> last = new AtomicReference<>(count.getVersionedValue());
        Peer.serve(f -> {
            switch (f[0]) {
                case "get":
                    VersionedValue<Integer> got = count.getVersionedValue();
                    last.set(got);
                    System.out.println("count " + got.getValue() + " " + got.getVersion());
                    return true;
                case "set":
                    count.setCount(Integer.parseInt(f[1]));
                    System.out.println("set " + f[1]);
                    return true;
                case "tryset":
                    System.out.println("tryset " + count.trySetCount(last.get(), Integer.parseInt(f[1])));
                    return true;
                case "add":
                    int k = Integer.parseInt(f[1]);
                    for (int i = 0; i < k; i++) {
                        while (true) {
                            VersionedValue<Integer> v = count.getVersionedValue();
                            if (count.trySetCount(v, v.getValue() + 1)) break;
                        }
                    }
                    System.out.println("added " + k);
                    return true;
                default:
                    return false;
            }
        });
        count.close();
        c.close();
    }
}
