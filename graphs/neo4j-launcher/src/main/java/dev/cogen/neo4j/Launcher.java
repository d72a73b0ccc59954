// cogen's local Neo4j: Neo4j Community (embedded, 5.26 LTS) with Bolt on 127.0.0.1, for development
// and CI without Docker or a Neo4j installation. Started by graphs/neo4j-local.js (`npm run neo4j`)
// and by the test setup (test/setup/neo4j.ts).
//
//   java -Xmx1g -jar target/neo4j-launcher.jar [--port 7687] [--data .neo4j-data] [--host 127.0.0.1]
//        [--password cogen-neo4j | --no-auth] [--page-cache-mb 64] [--exit-on-stdin-eof]
//
// Auth is on by default with the fixed development password: user `neo4j`, password `cogen-neo4j`
// (set on every start). `--no-auth` turns authentication off. Prints exactly one readiness line
//   NEO4J READY bolt://127.0.0.1:<port>
// on stdout once Bolt accepts connections and the `neo4j` database is available, or
//   NEO4J FAILED <reason>
// and exits 1. SIGTERM/SIGINT (and, with --exit-on-stdin-eof, the parent closing stdin) shut the
// database down cleanly, print `NEO4J STOPPED`, and exit 0.
package dev.cogen.neo4j;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

public final class Launcher {
    private static final String DEFAULT_PASSWORD = "cogen-neo4j";

    private static DatabaseManagementService dbms;
    private static final AtomicBoolean stopping = new AtomicBoolean(false);
    private static final CountDownLatch stopped = new CountDownLatch(1);

    public static void main(String[] args) {
        int port = 7687;
        String host = "127.0.0.1";
        String data = ".neo4j-data";
        String password = DEFAULT_PASSWORD;
        boolean auth = true;
        long pageCacheMb = 64;
        boolean watchStdin = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--port" -> port = Integer.parseInt(value(args, ++i, a));
                case "--host" -> host = value(args, ++i, a);
                case "--data" -> data = value(args, ++i, a);
                case "--password" -> password = value(args, ++i, a);
                case "--no-auth" -> auth = false;
                case "--page-cache-mb" -> pageCacheMb = Long.parseLong(value(args, ++i, a));
                case "--exit-on-stdin-eof" -> watchStdin = true;
                case "--help", "-h" -> {
                    System.out.println("usage: neo4j-launcher [--port N] [--host H] [--data DIR] [--password P | --no-auth]"
                            + " [--page-cache-mb N] [--exit-on-stdin-eof]");
                    return;
                }
                default -> fail("unknown argument " + a);
            }
        }
        if (auth && password.length() < 8) fail("the password must have at least 8 characters");

        try {
            Path home = Path.of(data).toAbsolutePath();
            dbms = new DatabaseManagementServiceBuilder(home)
                    .setConfig(BoltConnector.enabled, true)
                    .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
                    .setConfig(BoltConnector.advertised_address, new SocketAddress(host, port))
                    .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                    .setConfig(GraphDatabaseSettings.pagecache_memory, pageCacheMb * 1024L * 1024L)
                    // small, non-preallocated transaction logs: test databases are many and short-lived
                    .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                    .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, 16L * 1024L * 1024L)
                    .setConfig(GraphDatabaseSettings.keep_logical_logs, "2 files")
                    .build();
            Runtime.getRuntime().addShutdownHook(new Thread(Launcher::shutdown, "neo4j-launcher-shutdown"));
            if (!dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).isAvailable(120_000)) {
                fail("database neo4j did not become available");
            }
            if (auth) setPassword(password);
        } catch (Throwable t) {
            String reason = rootMessage(t);
            try {
                if (dbms != null) dbms.shutdown();
            } catch (Throwable ignored) {
                // already failing
            }
            fail(reason);
        }
        System.out.println("NEO4J READY bolt://" + host + ":" + port);
        System.out.flush();

        if (watchStdin) {
            Thread watcher = new Thread(() -> {
                try (InputStream in = System.in) {
                    byte[] buf = new byte[256];
                    while (in.read(buf) >= 0) { /* discard */ }
                } catch (IOException ignored) {
                    // closed: fall through
                }
                System.exit(0);
            }, "neo4j-launcher-stdin");
            watcher.setDaemon(true);
            watcher.start();
        }
        for (String sig : new String[] {"TERM", "INT"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(sig), s -> System.exit(0));
            } catch (IllegalArgumentException ignored) {
                // signal not available: the shutdown hook still runs
            }
        }
        try {
            stopped.await();
        } catch (InterruptedException ignored) {
            Thread.currentThread().interrupt();
        }
    }

    /** Sets the `neo4j` user's password (no change required), ignoring "same password" on restarts. */
    private static void setPassword(String password) {
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                    java.util.Map.of("password", password));
        } catch (RuntimeException e) {
            String m = rootMessage(e).toLowerCase();
            if (!m.contains("same")) throw e;
        }
    }

    private static void shutdown() {
        if (!stopping.compareAndSet(false, true)) return;
        try {
            if (dbms != null) dbms.shutdown();
            System.out.println("NEO4J STOPPED");
            System.out.flush();
        } catch (Throwable t) {
            System.err.println("NEO4J shutdown error: " + rootMessage(t));
        } finally {
            stopped.countDown();
        }
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) fail(flag + " needs a value");
        return args[i];
    }

    private static String rootMessage(Throwable t) {
        Throwable c = t;
        StringBuilder sb = new StringBuilder(String.valueOf(t.getMessage()));
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
            sb.append(" <- ").append(c.getMessage());
        }
        return sb.toString().replace('\n', ' ');
    }

    private static void fail(String reason) {
        System.out.println("NEO4J FAILED " + reason);
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }
}
