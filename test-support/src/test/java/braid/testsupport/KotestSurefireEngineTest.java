package braid.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/** Runs {@link NamingFixture} through a real JUnit Platform launcher, set up as the parent pom sets up Surefire. */
class KotestSurefireEngineTest {
    /** Every test (not container) that ran: its identifier and result, by display name. */
    private static Map<String, Map.Entry<TestIdentifier, TestExecutionResult>> run(boolean active, String excludedEngine) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(NamingFixture.class))
                .filters(EngineFilter.excludeEngines(excludedEngine))
                .configurationParameter(KotestSurefireEngine.ACTIVE, Boolean.toString(active))
                .build();
        Map<String, Map.Entry<TestIdentifier, TestExecutionResult>> finished = new ConcurrentHashMap<>();
        LauncherFactory.create().execute(request, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (id.isTest()) finished.put(id.getDisplayName(), Map.entry(id, result));
            }
        });
        return new TreeMap<>(finished);
    }

    @Test
    void underSurefireEveryKotestCaseCarriesAMethodSourceNamingItsSpecAndPath() {
        var ran = run(true, "kotest");
        assertEquals(List.of("a failing case", "a nested case", "a passing case"), List.copyOf(ran.keySet()));
        Map<String, String> methods = ran.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> {
            MethodSource source = assertInstanceOf(MethodSource.class, e.getValue().getKey().getSource().orElseThrow());
            assertEquals(NamingFixture.class.getName(), source.getClassName());
            return source.getMethodName();
        }));
        assertEquals(Map.of("a passing case", "a passing case", "a failing case", "a failing case", "a nested case", "a context -- a nested case"), methods);
        assertEquals(TestExecutionResult.Status.FAILED, ran.get("a failing case").getValue().getStatus());
        assertEquals("fails on purpose", ran.get("a failing case").getValue().getThrowable().orElseThrow().getMessage());
        assertEquals(TestExecutionResult.Status.SUCCESSFUL, ran.get("a passing case").getValue().getStatus());
    }

    @Test
    void withoutTheSwitchItFindsNothingSoKotestsOwnEngineRunsEachSpecOnce() {
        assertTrue(run(false, "kotest").isEmpty(), "the inactive engine ran tests");
        var ran = run(false, KotestSurefireEngine.ID);
        assertEquals(3, ran.size());
        ran.values().forEach(e -> assertInstanceOf(ClassSource.class, e.getKey().getSource().orElseThrow()));
    }
}
