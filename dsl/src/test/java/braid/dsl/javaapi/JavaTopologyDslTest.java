package braid.dsl.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import braid.core.IdleKind;
import braid.core.ProgressModel;
import braid.dsl.ConfigFileException;
import braid.dsl.LimitsSpec;
import braid.dsl.SpecException;
import braid.dsl.SpecProblem;
import braid.dsl.Topology;
import braid.dsl.TopologyFiles;
import braid.dsl.TopologyScope;
import braid.dsl.TopologySpec;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The topology DSL from plain Java: Consumer blocks, no Unit, no TopologyScopeKt. */
class JavaTopologyDslTest {
    @Test
    void theDslReadsAsJava() {
        TopologySpec spec = Topology.spec(t -> {
            t.setEnvironment(Map.of());
            t.link("shm+tcp:lo", l -> {
                l.rail("tcp", r -> r.setInjectSize(2048));
                l.setUnexpectedLimit(65536);
            });
            t.link(l -> {
                l.setName("fast");
                l.shm();
                l.rail("cxi0", r -> { r.setProvider("cxi"); r.setOptional(true); });
            });
            t.progress(p -> {
                p.setModel(ProgressModel.AUTO);
                p.idle(i -> { i.setKind(IdleKind.BACKOFF); i.setMaxParkNanos(500_000L); });
            });
            t.jobKey(k -> k.setEnv("MY_JOB_KEY"));
        });
        assertEquals(2, spec.getLinks().size());
        assertEquals(new LimitsSpec(2048, null, null, null), spec.getLinks().get(0).rail("tcp").getLimits());
        assertEquals(Integer.valueOf(65536), spec.getLinks().get(0).getLimits().getUnexpectedLimit());
        assertTrue(spec.getLinks().get(1).rail("cxi0").getOptional());
        assertEquals(500_000L, spec.getProgress().getIdle().getMaxParkNanos());
        assertEquals("MY_JOB_KEY", spec.getJobKey().getEnv());
    }

    @Test
    void ruleProblemsComeBackAsExceptionsJavaCanRead() {
        SpecException e = assertThrows(SpecException.class, () -> Topology.spec(t -> {
            t.setEnvironment(Map.of());
            t.link(l -> { l.setName("x"); l.shm(r -> r.setRingCapacity(3000)); });
        }));
        SpecProblem p = e.getProblems().get(0);
        assertEquals("links[0].rails[0].limits.ringCapacity", p.getPath());
        assertTrue(p.getMessage().contains("ringCapacity 3000 is not a power of two"), p.getMessage());
    }

    @Test
    void aMisspeltProviderGetsItsLinePathAndADidYouMean() {
        ConfigFileException e = assertThrows(ConfigFileException.class, () -> TopologyFiles.parse(
            "links = [\n  { name = x, rails = [ { name = a, provider = tpc } ] }\n]\n", TopologyFiles.Format.HOCON, "t.conf"));
        SpecProblem p = e.getProblems().get(0);
        assertEquals("links[0].rails[0].provider", p.getPath());
        assertEquals(Integer.valueOf(2), p.getLine());
        assertTrue(p.getHint().contains("did you mean 'tcp'?"), p.getHint());
    }

    @Test
    void noScopeMethodJavaSeesTakesAKotlinFunction() {
        for (Class<?> k : new Class<?>[] {TopologyScope.class, braid.dsl.LinkScope.class, braid.dsl.RailScope.class, braid.dsl.ProgressScope.class, Topology.class}) {
            for (Method m : k.getMethods()) {
                if (m.isSynthetic() || m.getName().contains("$")) continue; // Kotlin-internal members are mangled: not API
                boolean kotlinish = Arrays.stream(m.getParameterTypes()).anyMatch(c -> c.getName().startsWith("kotlin.jvm.functions."))
                    || m.getReturnType().getName().equals("kotlin.Unit");
                assertFalse(kotlinish, k.getSimpleName() + "." + m.getName() + " takes a Kotlin function or returns Unit: " + m);
            }
        }
    }
}
