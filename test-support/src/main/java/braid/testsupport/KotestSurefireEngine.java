package braid.testsupport;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import org.junit.platform.engine.ConfigurationParameters;
import org.junit.platform.engine.DiscoveryFilter;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.EngineDiscoveryListener;
import org.junit.platform.engine.EngineDiscoveryRequest;
import org.junit.platform.engine.EngineExecutionListener;
import org.junit.platform.engine.ExecutionRequest;
import org.junit.platform.engine.TestDescriptor;
import org.junit.platform.engine.TestEngine;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.TestTag;
import org.junit.platform.engine.UniqueId;
import org.junit.platform.engine.reporting.ReportEntry;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.EngineDescriptor;
import org.junit.platform.engine.support.descriptor.MethodSource;

/**
 * Kotest's JUnit Platform engine, run so that Surefire names every test case.
 *
 * <p>Kotest 5.9.1 gives every test a {@link ClassSource} (its spec class). Surefire 3.5 takes a
 * test's name only from a {@link MethodSource}, so it reported every Kotest case with an empty
 * name: {@code <testcase name="">} in the XML, {@code SomeTest.null} in the failure summary, and
 * the cases of one spec counted as reruns of one test. (Surefire's phrased-name reporters do not
 * help: they have no name to phrase. Kotest 6 switched to a MethodSource for this reason.) This
 * engine runs Kotest's and, as each test is registered, shows the launcher a MethodSource naming
 * the spec class and the test's path ({@code context -- test}); nothing else changes.
 *
 * <p>It is active only when the configuration parameter (or system property) {@value #ACTIVE} is
 * {@code true}. The parent pom sets it for Surefire and excludes the {@code kotest} engine there,
 * so each spec runs once; an IDE runs Kotest's engine as usual, and this one finds nothing.
 */
public final class KotestSurefireEngine implements TestEngine {
    public static final String ID = "braid-kotest";
    public static final String ACTIVE = "braid.kotest.surefire";
    private static final String KOTEST = "kotest";
    private static final String PATH_SEPARATOR = " -- ";

    private TestEngine kotest;

    @Override
    public String getId() {
        return ID;
    }

    @Override
    public TestDescriptor discover(EngineDiscoveryRequest request, UniqueId uniqueId) {
        if (!request.getConfigurationParameters().getBoolean(ACTIVE).orElse(false)) {
            return new Inactive(uniqueId);
        }
        return kotest().discover(new WithoutEngineFilters(request), uniqueId);
    }

    @Override
    public void execute(ExecutionRequest request) {
        TestDescriptor root = request.getRootTestDescriptor();
        EngineExecutionListener listener = request.getEngineExecutionListener();
        if (root instanceof Inactive) {
            listener.executionStarted(root);
            listener.executionFinished(root, TestExecutionResult.successful());
            return;
        }
        kotest().execute(new ExecutionRequest(root, new NamingListener(listener), request.getConfigurationParameters()));
    }

    private TestEngine kotest() {
        if (kotest == null) {
            // Skip this engine's own entry: instantiating it here would recurse.
            kotest = ServiceLoader.load(TestEngine.class).stream()
                    .filter(p -> p.type() != KotestSurefireEngine.class)
                    .map(ServiceLoader.Provider::get)
                    .filter(e -> KOTEST.equals(e.getId()))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException(
                            ID + ": no JUnit Platform engine '" + KOTEST + "' on the test class path; add io.kotest:kotest-runner-junit5-jvm"));
        }
        return kotest;
    }

    /**
     * [test] itself, or, for a Kotest test with its spec class as source, a view of it whose source
     * is a MethodSource: the spec class and the test's path below the spec.
     */
    static TestDescriptor named(TestDescriptor test) {
        if (!test.isTest() || !(test.getSource().orElse(null) instanceof ClassSource)) return test;
        Deque<String> path = new ArrayDeque<>();
        for (TestDescriptor t = test; t.getParent().isPresent() && !t.getParent().get().isRoot(); t = t.getParent().get()) {
            path.addFirst(t.getDisplayName());
        }
        if (path.isEmpty()) return test;
        String specClass = ((ClassSource) test.getSource().get()).getClassName();
        return new Named(test, MethodSource.from(specClass, String.join(PATH_SEPARATOR, path)));
    }

    /** The root when {@value #ACTIVE} is not set: no tests. */
    private static final class Inactive extends EngineDescriptor {
        Inactive(UniqueId uniqueId) {
            super(uniqueId, "Kotest for Surefire (inactive: " + ACTIVE + " is not true)");
        }
    }

    /**
     * The discovery request without the launcher's engine filters: Kotest 5.9.1 checks itself
     * against them and, finding {@code kotest} excluded, would discover nothing. The launcher has
     * applied them already in choosing this engine. (Kotest reads the post-discovery filters only
     * to translate Gradle's; the launcher still applies them.)
     */
    private static final class WithoutEngineFilters implements EngineDiscoveryRequest {
        private final EngineDiscoveryRequest request;

        WithoutEngineFilters(EngineDiscoveryRequest request) {
            this.request = request;
        }

        @Override
        public <T extends DiscoverySelector> List<T> getSelectorsByType(Class<T> selectorType) {
            return request.getSelectorsByType(selectorType);
        }

        @Override
        public <T extends DiscoveryFilter<?>> List<T> getFiltersByType(Class<T> filterType) {
            return request.getFiltersByType(filterType);
        }

        @Override
        public ConfigurationParameters getConfigurationParameters() {
            return request.getConfigurationParameters();
        }

        @Override
        public EngineDiscoveryListener getDiscoveryListener() {
            return request.getDiscoveryListener();
        }
    }

    /**
     * Passes every event on; a test being registered is passed as {@link #named}. The launcher
     * builds its test identifier then and finds it by unique id for every later event, so those
     * can carry Kotest's own descriptor.
     */
    private static final class NamingListener implements EngineExecutionListener {
        private final EngineExecutionListener listener;

        NamingListener(EngineExecutionListener listener) {
            this.listener = listener;
        }

        @Override
        public void dynamicTestRegistered(TestDescriptor descriptor) {
            listener.dynamicTestRegistered(named(descriptor));
        }

        @Override
        public void executionSkipped(TestDescriptor descriptor, String reason) {
            listener.executionSkipped(descriptor, reason);
        }

        @Override
        public void executionStarted(TestDescriptor descriptor) {
            listener.executionStarted(descriptor);
        }

        @Override
        public void executionFinished(TestDescriptor descriptor, TestExecutionResult result) {
            listener.executionFinished(descriptor, result);
        }

        @Override
        public void reportingEntryPublished(TestDescriptor descriptor, ReportEntry entry) {
            listener.reportingEntryPublished(descriptor, entry);
        }
    }

    /** Kotest's descriptor with another source; everything else is the descriptor's own. */
    private static final class Named implements TestDescriptor {
        private final TestDescriptor test;
        private final TestSource source;

        Named(TestDescriptor test, TestSource source) {
            this.test = test;
            this.source = source;
        }

        @Override
        public Optional<TestSource> getSource() {
            return Optional.of(source);
        }

        @Override
        public UniqueId getUniqueId() {
            return test.getUniqueId();
        }

        @Override
        public String getDisplayName() {
            return test.getDisplayName();
        }

        @Override
        public String getLegacyReportingName() {
            return test.getLegacyReportingName();
        }

        @Override
        public Set<TestTag> getTags() {
            return test.getTags();
        }

        @Override
        public Optional<TestDescriptor> getParent() {
            return test.getParent();
        }

        @Override
        public void setParent(TestDescriptor parent) {
            test.setParent(parent);
        }

        @Override
        public Set<? extends TestDescriptor> getChildren() {
            return test.getChildren();
        }

        @Override
        public void addChild(TestDescriptor child) {
            test.addChild(child);
        }

        @Override
        public void removeChild(TestDescriptor child) {
            test.removeChild(child);
        }

        @Override
        public void removeFromHierarchy() {
            test.removeFromHierarchy();
        }

        @Override
        public Type getType() {
            return test.getType();
        }

        @Override
        public Optional<? extends TestDescriptor> findByUniqueId(UniqueId uniqueId) {
            return test.findByUniqueId(uniqueId);
        }
    }
}
