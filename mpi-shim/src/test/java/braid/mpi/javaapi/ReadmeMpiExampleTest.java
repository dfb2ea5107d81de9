package braid.mpi.javaapi;

import braid.testsupport.DocExamples;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

/** The README's MPI quick start is RingAllreduce verbatim (MpiLaunchersIT runs it under every launcher). */
class ReadmeMpiExampleTest {
    @Test
    void theReadmeShowsExactlyThisExample() throws Exception {
        DocExamples.assertQuoted(Path.of("..", "README.md"),
            Path.of("src", "test", "java", "braid", "mpi", "javaapi", "example", "RingAllreduce.java"));
    }
}
