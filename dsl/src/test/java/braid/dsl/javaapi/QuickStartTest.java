package braid.dsl.javaapi;

import braid.dsl.javaapi.example.QuickStart;
import braid.testsupport.DocExamples;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The README's Java quick start, run as its reader runs it, over the sample config file. */
class QuickStartTest {
    @Test
    void theQuickStartRunsOverTheSampleConfig() throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            QuickStart.main(new String[] {"../samples/config/local.conf"});
        } finally {
            System.setOut(out);
        }
        String printed = captured.toString(StandardCharsets.UTF_8);
        assertEquals("b received 12 bytes on tag 7\nwrote 3 at offset 2; counter was 0, is 5\n", printed);
    }

    @Test
    void theReadmeShowsExactlyThisExample() throws Exception {
        DocExamples.assertQuoted(Path.of("..", "README.md"),
            Path.of("src", "test", "java", "braid", "dsl", "javaapi", "example", "QuickStart.java"));
    }
}
