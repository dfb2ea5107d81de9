package braid.collectives.javaapi;

import braid.collectives.CollectiveGroup;
import braid.testsupport.JavaSurface;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The collectives module's public API as Java sees it takes no Kotlin function type and no Unit,
 * and every method taking an Agrona buffer has a ByteBuffer form of the same name (rail-core's
 * JavaSurfaceTest, pointed at this module).
 */
class CollectivesJavaSurfaceTest {
    @Test
    void collectivesJavaVisibleSignaturesAreJavaShaped() throws Exception {
        List<String> problems = JavaSurface.problems(JavaSurface.classesOf(CollectiveGroup.class), "braid");
        assertEquals(List.of(), problems, problems.size() + " Java-unfriendly signatures:\n" + String.join("\n", problems));
    }
}
