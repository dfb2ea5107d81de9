package braid.mpi.javaapi;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The README's MPI quick start is RingAllreduce verbatim (MpiLaunchersIT runs it under every launcher). */
class ReadmeMpiExampleTest {
    @Test
    void theReadmeShowsExactlyThisExample() throws Exception {
        Path source = Path.of("src", "test", "java", "braid", "mpi", "javaapi", "example", "RingAllreduce.java");
        String body = Files.readString(source).replace("package braid.mpi.javaapi.example;\n\n", "");
        assertTrue(Files.readString(Path.of("..", "README.md")).contains("```java\n" + body + "```"),
            "README.md's MPI example differs from " + source + "; copy the file (without its package line) into the README");
    }
}
