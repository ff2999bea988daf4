import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.HashMap;
import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Curator LeaderLatch participants driven by lines on stdin.
 *
 * Usage: LatchPeer connectString latchPath sessionTimeoutMs
 *
 * Commands (one per line):
 *   start ID   start a participant with its own client (own session);
 *              prints "STARTED ID NODE" once its node exists
 *   leader ID  prints "LEADER ID LEADER_ID HAS" (HAS: does ID lead)
 *   close ID   closes the latch (deleting its node) and the client
 *   exit
 * Events: "ISLEADER ID", "NOTLEADER ID", "ERROR ...".
 */
public class LatchPeer {
    static synchronized void out(String s) {
        System.out.println(s);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        String connect = args[0];
        String path = args[1];
        int timeout = Integer.parseInt(args[2]);
        Map<String, CuratorFramework> clients = new HashMap<>();
        Map<String, LeaderLatch> latches = new HashMap<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        out("READY");
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            try {
                switch (f[0]) {
                case "start": {
                    final String id = f[1];
                    CuratorFramework c = CuratorFrameworkFactory.newClient(connect, timeout, timeout,
                            new ExponentialBackoffRetry(50, 10));
                    c.start();
                    c.blockUntilConnected();
                    LeaderLatch l = new LeaderLatch(c, path, id);
                    l.addListener(new LeaderLatchListener() {
                        public void isLeader() { out("ISLEADER " + id); }
                        public void notLeader() { out("NOTLEADER " + id); }
                    });
                    l.start();
                    while (l.getOurPath() == null) {
                        Thread.sleep(5);
                    }
                    clients.put(id, c);
                    latches.put(id, l);
                    out("STARTED " + id + " " + l.getOurPath());
                    break;
                }
                case "leader": {
                    LeaderLatch l = latches.get(f[1]);
                    Participant p = l.getLeader();
                    out("LEADER " + f[1] + " " + (p.isLeader() ? p.getId() : "-") + " " + l.hasLeadership());
                    break;
                }
                case "close": {
                    latches.remove(f[1]).close();
                    clients.remove(f[1]).close();
                    out("CLOSED " + f[1]);
                    break;
                }
                case "exit":
                    System.exit(0);
                default:
                    out("ERROR unknown command " + line);
                }
            } catch (Exception e) {
                out("ERROR " + line + ": " + e);
            }
        }
    }
}
