package braid.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChildProcessTest {
    /** The child: {@code Child MODE}; prints its environment's CHILD_SAYS, then does MODE. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            System.out.println("says " + System.getenv("CHILD_SAYS"));
            switch (args[0]) {
                case "ok" -> System.out.println("OK");
                case "home" -> System.out.println("HOME=" + System.getenv("HOME") + " OK");
                case "fail" -> {
                    System.out.println("line one\nline two");
                    System.err.println("trouble");
                    System.exit(3);
                }
                case "ready-then-hang" -> {
                    System.out.println("READY");
                    Thread.sleep(300_000);
                }
                default -> Thread.sleep(300_000);
            }
        }
    }

    private static final String CHILD = Child.class.getName();
    private static final Duration LONG = Duration.ofSeconds(60);

    @Test
    void aJvmChildGetsItsEnvironmentAndItsOutputIsReturnedWhenItExitsOk(@TempDir Path dir) {
        File log = dir.resolve("ok.log").toFile();
        try (ChildProcess c = ChildProcess.jvm(CHILD, "ok").env("CHILD_SAYS", "hello").output(log).start()) {
            String out = c.awaitOk(LONG);
            assertTrue(out.contains("says hello"), out);
            assertEquals(out, c.output());
            assertTrue(c.command().contains("-D" + ChildProcess.TAG_PROPERTY + "=" + c.command().stream()
                    .filter(a -> a.startsWith("-D" + ChildProcess.TAG_PROPERTY)).findFirst().orElseThrow().split("=")[1]));
            assertTrue(c.command().contains("-XX:+UseSerialGC"), c.command().toString());
        }
        assertTrue(log.exists(), "an output file the test named is kept");
    }

    @Test
    void inheritedVariablesCanBeRemovedAndAnOverrideStillApplies() {
        try (ChildProcess c = ChildProcess.jvm(CHILD, "home").withoutEnv(n -> n.equals("HOME") || n.equals("CHILD_SAYS"))
                .env("CHILD_SAYS", "kept").start()) {
            assertEquals("says kept\nHOME=null OK\n", c.awaitOk(LONG));
        }
    }

    @Test
    void aChildThatExitsNonZeroFailsNamingItsStatusAndShowingTheTailOfItsOutput() {
        try (ChildProcess c = ChildProcess.jvm(CHILD, "fail").name("rank 2").start()) {
            AssertionError e = assertThrows(AssertionError.class, () -> c.awaitOk(LONG));
            String m = e.getMessage();
            assertTrue(m.startsWith("child 'rank 2' (pid " + c.pid() + ") exited 3; its output ("), m);
            assertTrue(m.endsWith("says null\nline one\nline two\ntrouble"), m);
        }
    }

    @Test
    void stderrApartFromStdoutGoesToItsOwnFileAndBothTailsAreShown(@TempDir Path dir) {
        File out = dir.resolve("out").toFile();
        try (ChildProcess c = ChildProcess.jvm(CHILD, "fail").output(out).errorOutput(dir.resolve("err").toFile()).start()) {
            assertEquals(3, c.awaitExit(LONG));
            assertEquals("trouble\n", c.errorOutput());
            assertFalse(c.output().contains("trouble"));
            assertTrue(c.tail().contains("its stderr (" + dir.resolve("err") + "):\ntrouble"), c.tail());
        }
    }

    @Test
    void aChildStillRunningAtTheDeadlineIsKilledAndTheFailureSaysWhatWasAwaited() {
        try (ChildProcess c = ChildProcess.jvm(CHILD, "ready-then-hang").start()) {
            c.awaitOutput("READY", LONG);
            AssertionError e = assertThrows(AssertionError.class, () -> c.awaitExit(Duration.ofMillis(200)));
            assertTrue(e.getMessage().startsWith("timed out after 200 ms waiting for child 'ChildProcessTest$Child' (pid " + c.pid()
                    + ") to exit; last saw: child"), e.getMessage());
            assertTrue(e.getMessage().contains("it was still running and is killed now; its output ("), e.getMessage());
            assertTrue(e.getMessage().endsWith("READY"), e.getMessage());
            assertFalse(c.isAlive());
        }
    }

    @Test
    void waitingForALineFailsAtOnceWhenTheChildExitsWithoutPrintingIt() {
        try (ChildProcess c = ChildProcess.jvm(CHILD, "fail").start()) {
            AssertionError e = assertThrows(AssertionError.class, () -> c.awaitOutput("IN-FLIGHT", LONG));
            assertTrue(e.getMessage().contains("exited 3 before printing 'IN-FLIGHT'"), e.getMessage());
        }
    }

    @Test
    void echoCopiesEachLineToTheStreamAfterThePrefixAndStillFillsTheFile() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream echo = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try (ChildProcess c = ChildProcess.jvm(CHILD, "ok").env("CHILD_SAYS", "hi").echo(echo, "[kid] ").start()) {
            c.awaitOk(LONG);
            assertEquals("says hi\nOK\n", c.output());
        }
        assertEquals("[kid] says hi\n[kid] OK\n", bytes.toString(StandardCharsets.UTF_8));
    }

    @Test
    void closeKillsTheWholeProcessTree() throws Exception {
        ChildProcess c = ChildProcess.command("bash", "-c", "sleep 300 & sleep 300 & echo started; wait").start();
        c.awaitOutput("started", LONG);
        List<ProcessHandle> tree =
                Deadline.await("the two sleeps to start", LONG, () -> c.process().descendants().toList(), t -> t.size() == 2);
        c.close();
        assertFalse(c.isAlive());
        for (ProcessHandle p : tree) assertFalse(p.isAlive(), "descendant " + p.pid() + " survived close");
    }

    @Test
    void aJvmTheLauncherLeftRunningIsFoundByItsTagAndKilledOnClose() {
        // A "launcher" that starts the JVM in the background and exits: the JVM is reparented to init.
        ChildProcess c = ChildProcess.jvm(CHILD, "ready-then-hang")
                .launcher(cmd -> {
                    List<String> all = new ArrayList<>(List.of("bash", "-c", "\"$@\" & echo launched", "launcher"));
                    all.addAll(cmd);
                    return all;
                }).start();
        try {
            assertEquals(0, c.awaitExit(LONG));
            Deadline.await("the orphaned JVM to print READY", LONG, () -> c.output().contains("READY"));
            List<ProcessHandle> left = c.leftovers(Duration.ZERO);
            assertEquals(1, left.size(), left.toString());
            c.close();
            assertTrue(c.leftovers(Duration.ofSeconds(10)).isEmpty());
        } finally {
            c.close();
        }
    }

    @Test
    void aCommandChildTakesNoJvmSettingsAndSaysSo() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ChildProcess.command("true").jvmArgs("-Xmx1m"));
        assertTrue(e.getMessage().contains("ChildProcess.jvmArgs: the child runs the command [true], not a JVM"), e.getMessage());
    }

    @Test
    void aTemporaryOutputFileIsRemovedOnClose() throws Exception {
        File f;
        try (ChildProcess c = ChildProcess.command("echo", "OK").start()) {
            assertEquals("OK\n", c.awaitOk(LONG));
            f = c.outputFile();
            assertTrue(Files.exists(f.toPath()));
        }
        assertFalse(f.exists());
    }
}
