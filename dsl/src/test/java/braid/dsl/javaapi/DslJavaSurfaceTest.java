package braid.dsl.javaapi;

import braid.dsl.ConfigFileException;
import braid.dsl.Topology;
import braid.dsl.TopologyFiles;
import braid.testsupport.JavaSurface;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dsl module's public API as Java sees it: no mangled internal names, nothing reached only
 * through Companion, no Kotlin function type or Unit without a Java form (see JavaSurface).
 */
class DslJavaSurfaceTest {
    @Test
    void dslsJavaVisibleSignaturesAreJavaShaped() throws Exception {
        List<String> problems = JavaSurface.problems(JavaSurface.classesOf(Topology.class), "braid");
        assertEquals(List.of(), problems, problems.size() + " Java-unfriendly signatures:\n" + String.join("\n", problems));
    }

    @Test
    void readingAConfigFileDeclaresTheExceptionJavaCallersCatch() throws Exception {
        for (var m : List.of(TopologyFiles.class.getMethod("read", Path.class),
                TopologyFiles.class.getMethod("read", Path.class, TopologyFiles.Format.class),
                TopologyFiles.class.getMethod("parse", String.class, TopologyFiles.Format.class))) {
            assertTrue(List.of(m.getExceptionTypes()).contains(ConfigFileException.class), m + " declares ConfigFileException");
        }
    }
}
