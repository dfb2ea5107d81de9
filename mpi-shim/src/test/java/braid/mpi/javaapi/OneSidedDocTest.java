package braid.mpi.javaapi;

import braid.testsupport.DocExamples;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

/** docs/one-sided.md shows OneSided verbatim (WindowMultiProcessIT runs it under braid run). */
class OneSidedDocTest {
    @Test
    void theOneSidedPageShowsExactlyThisExample() throws Exception {
        DocExamples.assertQuoted(Path.of("..", "docs", "one-sided.md"),
            Path.of("src", "test", "java", "braid", "mpi", "javaapi", "example", "OneSided.java"));
    }
}
