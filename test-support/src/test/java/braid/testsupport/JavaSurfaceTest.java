package braid.testsupport;

import braid.testsupport.surface.bad.KotlinShapedApi;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * JavaSurface finds Kotlin function types and Unit in public signatures, mangled internal names
 * and members reached only through Companion, and passes Java-shaped ones.
 */
class JavaSurfaceTest {
    @Test
    void reportsAKotlinFunctionTypeParameterAndAUnitReturn() throws Exception {
        List<String> problems = JavaSurface.problems(JavaSurface.classesOf(KotlinShapedApi.class), "braid.testsupport.surface.bad");
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("done()") && problems.get(0).contains("kotlin.Unit"), problems.toString());
        assertTrue(problems.get(1).contains("onEach(Function1)") && problems.get(1).contains("Kotlin function type"), problems.toString());
    }

    @Test
    void passesJavaShapedPublicMethodsAndIgnoresPrivateOnes() throws Exception {
        assertEquals(List.of(), JavaSurface.problems(JavaSurface.classesOf(KotlinShapedApi.class), "braid.testsupport.surface.good"));
    }

    @Test
    void reportsAMangledNameAndAMemberReachedOnlyThroughCompanion() throws Exception {
        List<String> problems = JavaSurface.problems(JavaSurface.classesOf(KotlinShapedApi.class), "braid.testsupport.surface.leaky");
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("LeakyApi.Companion.create()") && problems.get(0).contains("only through Companion"), problems.toString());
        assertTrue(problems.get(1).contains("guard$braid_mpi_shim()") && problems.get(1).contains("mangled name"), problems.toString());
    }
}
