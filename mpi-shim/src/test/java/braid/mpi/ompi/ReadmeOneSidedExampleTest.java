package braid.mpi.ompi;

import braid.testsupport.DocExamples;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's one-sided example is example.Counter verbatim (OmpiProgramsIT runs it). */
class ReadmeOneSidedExampleTest {
    @Test
    void theReadmeShowsExactlyThisExample() throws Exception {
        DocExamples.assertQuoted(Path.of("..", "README.md"),
                Path.of("src", "test", "java", "braid", "mpi", "ompi", "example", "Counter.java"));
    }
}
