package braid.javaapi;

import braid.javaapi.example.HelloBraid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The README's Java example, run as its reader would: a server JVM and a client JVM over shm. */
class JavaExampleIT {
    private static Process start(String role, Path dir, File log) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        return new ProcessBuilder(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
            HelloBraid.class.getName(), role, dir.toString()))
            .redirectErrorStream(true).redirectOutput(log).start();
    }

    private static String awaitOk(Process p, File log, String role) throws Exception {
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("the " + role + " did not exit within 180 s; its output:\n" + Files.readString(log.toPath()));
        }
        String out = Files.readString(log.toPath());
        assertEquals(0, p.exitValue(), "the " + role + " failed:\n" + out);
        assertTrue(out.contains("OK " + role), "the " + role + " exited without OK:\n" + out);
        return out;
    }

    @Test
    void theReadmesTwoProcessJavaExampleExchangesMessagesRmaAndAnAtomic(@TempDir Path dir) throws Exception {
        File serverLog = dir.resolve("server.log").toFile();
        File clientLog = dir.resolve("client.log").toFile();
        Process server = start("server", dir, serverLog);
        Process client = start("client", dir, clientLog);
        try {
            String c = awaitOk(client, clientLog, "client");
            String s = awaitOk(server, serverLog, "server");
            assertTrue(c.contains("client: counter was 0"), c);
            assertTrue(s.contains("the RMA write and the fetch-add arrived"), s);
        } finally {
            server.destroyForcibly();
            client.destroyForcibly();
        }
    }

    @Test
    void theReadmeShowsExactlyThisExample() throws Exception {
        Path readme = Path.of("..", "README.md");
        Path source = Path.of("src", "test", "java", "braid", "javaapi", "example", "HelloBraid.java");
        String body = Files.readString(source).replace("package braid.javaapi.example;\n\n", "");
        assertTrue(Files.readString(readme).contains("```java\n" + body + "```"),
            "README.md's Java example differs from " + source + "; copy the file (without its package line) into the README");
    }
}
