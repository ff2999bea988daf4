import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import java.io.BufferedReader;
import java.io.InputStreamReader;

// SharedCountPeer drives a Curator SharedCount.
// Arguments: connect string, path, seed.
// Commands: "get" -> "count <value> <version>"; "set N" -> "set N";
// "tryset N" (from the last value seen by "get") -> "tryset true|false";
// "add K" (K increments by trySetCount) -> "added K".
// Events: "ready", "changed <value>", "error <message>".
public class SharedCountPeer {
    public static void main(String[] args) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(args[0], 20000, 8000,
                new ExponentialBackoffRetry(100, 5));
        c.start();
        c.blockUntilConnected();
        SharedCount count = new SharedCount(c, args[1], Integer.parseInt(args[2]));
        count.addListener(new SharedCountListener() {
            public void countHasChanged(SharedCountReader r, int n) {
                System.out.println("changed " + n);
            }
            public void stateChanged(CuratorFramework f, ConnectionState s) {}
        });
        count.start();
        System.out.println("ready");
        VersionedValue<Integer> last = count.getVersionedValue();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split(" ");
            try {
                switch (f[0]) {
                    case "get":
                        last = count.getVersionedValue();
                        System.out.println("count " + last.getValue() + " " + last.getVersion());
                        break;
                    case "set":
                        count.setCount(Integer.parseInt(f[1]));
                        System.out.println("set " + f[1]);
                        break;
                    case "tryset":
                        System.out.println("tryset " + count.trySetCount(last, Integer.parseInt(f[1])));
                        break;
                    case "add":
                        int k = Integer.parseInt(f[1]);
                        for (int i = 0; i < k; i++) {
                            while (true) {
                                VersionedValue<Integer> v = count.getVersionedValue();
                                if (count.trySetCount(v, v.getValue() + 1)) break;
                            }
                        }
                        System.out.println("added " + k);
                        break;
                    default:
                        System.out.println("error unknown command " + line);
                }
            } catch (Exception e) {
                System.out.println("error " + e);
            }
        }
        count.close();
        c.close();
    }
}
