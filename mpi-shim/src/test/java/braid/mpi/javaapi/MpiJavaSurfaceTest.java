package braid.mpi.javaapi;

import braid.mpi.Mpi;
import braid.testsupport.JavaSurface;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * mpi-shim's public API as Java sees it (braid.mpi and braid.bootstrap): no
 * mangled internal names, nothing reached only through Companion, no Kotlin function type or
 * Unit, and a ByteBuffer form beside every Agrona buffer (see JavaSurface).
 */
class MpiJavaSurfaceTest {
    @Test
    void mpiShimsJavaVisibleSignaturesAreJavaShaped() throws Exception {
        List<String> problems = JavaSurface.problems(JavaSurface.classesOf(Mpi.class), "braid");
        assertEquals(List.of(), problems, problems.size() + " Java-unfriendly signatures:\n" + String.join("\n", problems));
    }
}
