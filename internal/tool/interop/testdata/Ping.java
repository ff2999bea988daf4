import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import java.io.BufferedReader;
import java.io.InputStreamReader;

// Ping connects with Curator, then answers "create PATH" with "created PATH".
public class Ping {
    public static void main(String[] args) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(args[0], new RetryOneTime(100));
        c.start();
        c.blockUntilConnected();
        System.out.println("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split(" ");
            if (f[0].equals("create")) {
                c.create().creatingParentsIfNeeded().forPath(f[1]);
                System.out.println("created " + f[1]);
            }
        }
        c.close();
    }
}
