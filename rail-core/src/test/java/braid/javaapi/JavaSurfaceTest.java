package braid.javaapi;

import braid.core.Endpoint;
import braid.testsupport.JavaSurface;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * rail-core's public API as Java sees it takes no Kotlin function type and no Unit, and every
 * method taking an Agrona buffer has a ByteBuffer form of the same name (see JavaSurface).
 */
class JavaSurfaceTest {
    @Test
    void railCoresJavaVisibleSignaturesAreJavaShaped() throws Exception {
        List<String> problems = JavaSurface.problems(JavaSurface.classesOf(Endpoint.class), "braid");
        assertEquals(List.of(), problems, problems.size() + " Java-unfriendly signatures:\n" + String.join("\n", problems));
    }
}
