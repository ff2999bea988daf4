import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

// Peer is what the Curator peers of internal/interop share: the connection,
// and the line protocol. serve prints "ready", then answers each command
// line read from stdin through a Handler; an unknown command, or one that
// throws, is answered "error <message>" and the peer keeps serving.
final class Peer {
    private Peer() {}

    // Handler answers one command line, split on spaces; it returns false
    // for a command it does not know.
    interface Handler {
        boolean handle(String[] f) throws Exception;
    }

    // connect starts a client of servers with the given session timeout
    // and waits until it is connected.
    static CuratorFramework connect(String servers, int sessionTimeoutMs) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.newClient(servers, sessionTimeoutMs, 8000,
                new ExponentialBackoffRetry(100, 5));
        c.start();
        c.blockUntilConnected();
        return c;
    }

    // serve answers stdin's command lines with h until stdin ends.
    static void serve(Handler h) throws IOException {
        System.out.println("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split(" ");
            try {
                if (!h.handle(f)) {
                    System.out.println("error unknown command " + line);
                }
            } catch (Exception e) {
                System.out.println("error " + e.toString().replace('\n', ' '));
            }
        }
    }
}
