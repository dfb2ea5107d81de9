package braid.dsl.javaapi;

import braid.dsl.Topology;
import braid.testsupport.JavaSurface;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
