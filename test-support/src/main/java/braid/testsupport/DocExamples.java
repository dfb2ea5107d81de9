package braid.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The check behind every example the README and {@code docs/} quote: the page shows the test source file word for
 * word, without its package line, in a {@code ```java} block. The test that runs the example keeps the quote true.
 */
public final class DocExamples {
    private DocExamples() {}

    /** Fails unless {@code page} quotes {@code source} (its package line left out) as a Java block. */
    public static void assertQuoted(Path page, Path source) throws IOException {
        String body = Files.readString(source).replaceFirst("\\Apackage [\\w.]+;\n\n", "");
        if (!Files.readString(page).contains("```java\n" + body + "```")) {
            throw new AssertionError(page + " does not show " + source + " as it is; copy the file (without its package"
                + " line) into that page");
        }
    }
}
