import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.curator.framework.recipes.locks.LockInternals;
import org.apache.curator.framework.recipes.locks.LockInternalsSorter;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;

/**
 * Sorts node names the way Curator's LeaderLatch does.
 *
 * Reads batches of names, one per line, each batch ended by an empty line,
 * and prints each batch sorted, followed by an empty line.
 */
public class SortCheck {
    public static void main(String[] args) throws Exception {
        LockInternalsSorter sorter = new LockInternalsSorter() {
            public String fixForSorting(String str, String lockName) {
                return StandardLockInternalsDriver.standardFixForSorting(str, lockName);
            }
        };
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        out.println("READY");
        List<String> batch = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.isEmpty()) {
                batch.add(line);
                continue;
            }
            for (String s : LockInternals.getSortedChildren("latch-", sorter, batch)) {
                out.println(s);
            }
            out.println();
            out.flush();
            batch.clear();
        }
    }
}
