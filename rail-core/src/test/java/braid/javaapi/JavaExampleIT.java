package braid.javaapi;

import braid.javaapi.example.HelloBraid;
import braid.testsupport.ChildProcess;
import braid.testsupport.DocExamples;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** docs/java.md's two-process Java example, run as its reader would: a server JVM and a client JVM over shm. */
class JavaExampleIT {
    private static ChildProcess start(String role, Path dir) {
        return ChildProcess.jvm(HelloBraid.class.getName(), role, dir.toString())
            .name(role).output(dir.resolve(role + ".log")).start();
    }

    private static String awaitOk(ChildProcess p, String role) {
        int rc = p.awaitExit(Duration.ofSeconds(180));
        String out = p.output();
        assertEquals(0, rc, "the " + role + " failed:\n" + out);
        assertTrue(out.contains("OK " + role), "the " + role + " exited without OK:\n" + out);
        return out;
    }

    @Test
    void theReadmesTwoProcessJavaExampleExchangesMessagesRmaAndAnAtomic(@TempDir Path dir) throws Exception {
        try (ChildProcess server = start("server", dir); ChildProcess client = start("client", dir)) {
            String c = awaitOk(client, "client");
            String s = awaitOk(server, "server");
            assertTrue(c.contains("client: counter was 0"), c);
            assertTrue(s.contains("the RMA write and the fetch-add arrived"), s);
        }
    }

    @Test
    void theReadmeShowsExactlyThisExample() throws Exception {
        DocExamples.assertQuoted(Path.of("..", "docs", "java.md"),
            Path.of("src", "test", "java", "braid", "javaapi", "example", "HelloBraid.java"));
    }
}
