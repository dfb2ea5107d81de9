package braid.mpi.ompi;

import braid.testsupport.DocExamples;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** docs/mpi.md's example of the mpi package is example.Ring verbatim (OmpiProgramsIT runs it). */
class DocsOmpiExampleTest {
    @Test
    void theMpiPageShowsExactlyThisExample() throws Exception {
        DocExamples.assertQuoted(Path.of("..", "docs", "mpi.md"),
                Path.of("src", "test", "java", "braid", "mpi", "ompi", "example", "Ring.java"));
    }
}
