package braid.testsupport;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * The one child-process launcher of Braid's tests: a JVM on the test class path running a main
 * class ({@link #jvm}), or any command ({@link #command}: a shell, a launcher such as
 * {@code mpiexec}), with environment overrides (and inherited variables removed) and its output
 * in a file. Waits take a {@link Deadline}; a wait that fails kills the child and says which
 * child, how it ended and the tail of its output. {@link #close} kills the whole process tree if it is still running.
 *
 * <pre>{@code
 * try (ChildProcess rank = ChildProcess.jvm("braid.it.PeerMain", "shm", "send").env("BRAID_JOB_KEY", "k").output(log).start()) {
 *     rank.awaitOutput("IN-FLIGHT", Duration.ofSeconds(60));   // a line the child prints
 *     String out = rank.awaitOk(Duration.ofSeconds(60));       // exit 0, having printed OK
 * }
 * }</pre>
 *
 * <p>A JVM child runs this JVM's {@code java} with the serial collector (a test machine runs many
 * JVMs), {@code -Xmx256m} unless {@link Builder#jvmArgs} says otherwise, and a
 * {@code -Dbraid.test.child=TAG} property unique to it. A {@link Builder#launcher launcher} may
 * wrap the JVM's command line ({@code ip netns exec NS}, {@code mpiexec -n 4}); the tag finds the
 * JVMs it started even when the launcher has died and left them to init ({@link #leftovers}), and
 * {@link #close} kills those too.
 *
 * <p>Output goes to the file {@link Builder#output} names (stdout and stderr together unless
 * {@link Builder#errorOutput} separates them), or to a temporary file removed on close;
 * {@link Builder#echo} also copies each line to a stream with a prefix ("[rank 1] ").
 */
public final class ChildProcess implements AutoCloseable {
    /** The system property every JVM child carries, its value unique to that child. */
    public static final String TAG_PROPERTY = "braid.test.child";

    /** A JVM child's arguments where {@link Builder#jvmArgs} gives none. */
    public static final List<String> DEFAULT_JVM_ARGS = List.of("-Xmx256m");

    /** How many lines of its output a failure shows. */
    public static final int TAIL_LINES = 80;

    private static final Duration KILL_WAIT = Duration.ofSeconds(10);

    private final String name;
    private final List<String> command;
    private final Process process;
    private final File output;
    private final File errorOutput;
    private final boolean temporaryOutput;
    private final String tag;
    private final boolean launched;
    private final List<Thread> pumps = new ArrayList<>();

    private ChildProcess(Builder b) {
        String newTag = UUID.randomUUID().toString();
        List<String> cmd = b.jvmCommand(newTag);
        launched = b.launcher != null;
        if (launched) cmd = List.copyOf(Objects.requireNonNull(b.launcher.apply(cmd), "the launcher returned no command"));
        command = cmd;
        tag = b.mainClass == null ? null : newTag;
        if (b.name != null) name = b.name;
        else if (b.mainClass != null) name = b.mainClass.substring(b.mainClass.lastIndexOf('.') + 1);
        else name = new File(cmd.get(0)).getName();
        try {
            temporaryOutput = b.output == null;
            output = temporaryOutput ? Files.createTempFile("braid-child-" + safe(name) + "-", ".log").toFile() : b.output;
            errorOutput = b.errorOutput;
            ProcessBuilder pb = new ProcessBuilder(command);
            pb.environment().keySet().removeIf(b.unset);
            pb.environment().putAll(b.env);
            if (errorOutput == null) pb.redirectErrorStream(true);
            if (b.echo == null) {
                pb.redirectOutput(output);
                if (errorOutput != null) pb.redirectError(errorOutput);
                process = pb.start();
            } else {
                process = pb.start();
                pumps.add(pump(process.getInputStream(), output, b.echo, b.echoPrefix));
                if (errorOutput != null) pumps.add(pump(process.getErrorStream(), errorOutput, b.echo, b.echoPrefix));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start child '" + name + "': " + String.join(" ", command), e);
        }
    }

    // ## Starting ##

    /** A JVM child running {@code mainClass} with {@code args}, on this JVM's class path. */
    public static Builder jvm(String mainClass, List<String> args) {
        return new Builder(Objects.requireNonNull(mainClass, "mainClass"), null, args);
    }

    /** A JVM child running {@code mainClass} with {@code args}, on this JVM's class path. */
    public static Builder jvm(String mainClass, String... args) {
        return jvm(mainClass, Arrays.asList(args));
    }

    /** A child running {@code command} as it is (a shell, a launcher). */
    public static Builder command(List<String> command) {
        if (command.isEmpty()) {
            throw new IllegalArgumentException("ChildProcess.command: the command is empty; give the program and its arguments");
        }
        return new Builder(null, command, List.of());
    }

    /** A child running {@code command} as it is (a shell, a launcher). */
    public static Builder command(String... command) {
        return command(Arrays.asList(command));
    }

    /** This JVM's {@code java} executable. */
    public static String java() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    /**
     * {@code java JVMARGS -cp CLASSPATH MAIN ARGS} with this JVM's java and class path: for a
     * command line that runs a JVM inside another one (a launcher's own JVM). A child's own JVM is
     * {@link #jvm}.
     */
    public static List<String> javaCommand(String mainClass, List<String> args, List<String> jvmArgs) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        cmd.addAll(args);
        return cmd;
    }

    /** How a child is started: {@link #start} launches it. */
    public static final class Builder {
        private final String mainClass;
        private final List<String> command;
        private final List<String> args;
        private List<String> jvmArgs = DEFAULT_JVM_ARGS;
        private String classPath = System.getProperty("java.class.path");
        private UnaryOperator<List<String>> launcher;
        private final Map<String, String> env = new LinkedHashMap<>();
        private Predicate<String> unset = name -> false;
        private File output;
        private File errorOutput;
        private PrintStream echo;
        private String echoPrefix = "";
        private String name;

        private Builder(String mainClass, List<String> command, List<String> args) {
            this.mainClass = mainClass;
            this.command = command == null ? null : List.copyOf(command);
            this.args = List.copyOf(args);
        }

        /** What failures call the child ("rank 2", "server"); by default the main class's simple name or the program's. */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * The JVM's arguments ({@code -Xmx192m}, {@code -D…}), in place of {@link #DEFAULT_JVM_ARGS}.
         * The serial collector is added unless they choose a collector ({@code -XX:+Use…GC}).
         */
        public Builder jvmArgs(List<String> jvmArgs) {
            requireJvm("jvmArgs");
            this.jvmArgs = List.copyOf(jvmArgs);
            return this;
        }

        /** As {@link #jvmArgs(List)}. */
        public Builder jvmArgs(String... jvmArgs) {
            return jvmArgs(Arrays.asList(jvmArgs));
        }

        /** The JVM's class path; by default this JVM's. */
        public Builder classPath(String classPath) {
            requireJvm("classPath");
            this.classPath = classPath;
            return this;
        }

        /** Runs the JVM's command line under {@code prefix} ({@code ip netns exec NS}); the prefix must exec it. */
        public Builder launcher(List<String> prefix) {
            List<String> p = List.copyOf(prefix);
            return launcher(cmd -> {
                List<String> all = new ArrayList<>(p);
                all.addAll(cmd);
                return all;
            });
        }

        /** Runs the command line {@code wrap} makes of the JVM's ({@code mpiexec -n 4 JAVA…}). */
        public Builder launcher(UnaryOperator<List<String>> wrap) {
            requireJvm("launcher");
            this.launcher = Objects.requireNonNull(wrap, "launcher");
            return this;
        }

        /** Removes the variables whose names {@code name} accepts from what the child inherits (before {@link #env} sets any). */
        public Builder withoutEnv(Predicate<String> name) {
            this.unset = this.unset.or(Objects.requireNonNull(name, "name"));
            return this;
        }

        /** Sets (overrides) the child's environment variable {@code name}. */
        public Builder env(String name, String value) {
            env.put(name, value);
            return this;
        }

        /** Sets (overrides) each of the child's environment variables in {@code vars}. */
        public Builder env(Map<String, String> vars) {
            env.putAll(vars);
            return this;
        }

        /** Where the child's output goes: stdout, and stderr unless {@link #errorOutput} is given. */
        public Builder output(File file) {
            this.output = file;
            return this;
        }

        /** As {@link #output(File)}. */
        public Builder output(Path file) {
            return output(file.toFile());
        }

        /** Where the child's stderr goes, apart from its stdout. */
        public Builder errorOutput(File file) {
            this.errorOutput = file;
            return this;
        }

        /** Also copies each line of the child's output to {@code stream}, after {@code prefix} ("[rank 1] "). */
        public Builder echo(PrintStream stream, String prefix) {
            this.echo = Objects.requireNonNull(stream, "stream");
            this.echoPrefix = prefix;
            return this;
        }

        /** Starts the child. */
        public ChildProcess start() {
            return new ChildProcess(this);
        }

        private List<String> jvmCommand(String tag) {
            if (mainClass == null) return command;
            List<String> jvm = new ArrayList<>();
            if (jvmArgs.stream().noneMatch(a -> a.startsWith("-XX:+Use") && a.endsWith("GC"))) jvm.add("-XX:+UseSerialGC");
            jvm.add("-D" + TAG_PROPERTY + "=" + tag); // before the class path: see tagged()
            jvm.addAll(jvmArgs);
            List<String> cmd = new ArrayList<>();
            cmd.add(java());
            cmd.addAll(jvm);
            cmd.add("-cp");
            cmd.add(classPath);
            cmd.add(mainClass);
            cmd.addAll(args);
            return cmd;
        }

        private void requireJvm(String what) {
            if (mainClass == null) {
                throw new IllegalStateException("ChildProcess." + what + ": the child runs the command " + command
                        + ", not a JVM; start it with ChildProcess.jvm(mainClass, args) to set " + what);
            }
        }
    }

    // ## The child ##

    /** What failures call it. */
    public String name() {
        return name;
    }

    /** The process started: the JVM, or the launcher that runs it. */
    public Process process() {
        return process;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The command line it was started with. */
    public List<String> command() {
        return command;
    }

    /** The file its output goes to. */
    public File outputFile() {
        return output;
    }

    /** Its output so far (stdout, and stderr unless separated). */
    public String output() {
        return read(output);
    }

    /** Its stderr so far, where {@link Builder#errorOutput} separated it; else "". */
    public String errorOutput() {
        return errorOutput == null ? "" : read(errorOutput);
    }

    /** The last {@link #TAIL_LINES} lines of its output (and of its stderr, where separate), headed by where they come from. */
    public String tail() {
        StringBuilder m = new StringBuilder();
        tail(m, "output", output);
        if (errorOutput != null) tail(m, "stderr", errorOutput);
        return m.toString();
    }

    // ## Waiting ##

    /** Waits for it to exit and returns its exit status; past {@code deadline} kills it and fails with its output's tail. */
    public int awaitExit(Deadline deadline) {
        try {
            if (!process.waitFor(deadline.remainingNanos(), TimeUnit.NANOSECONDS)) {
                kill();
                throw deadline.failure(() -> this + " to exit; it was still running and is killed now; " + tail());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
            throw new AssertionError("interrupted while waiting for " + this + " to exit", e);
        }
        joinPumps();
        return process.exitValue();
    }

    /** As {@link #awaitExit(Deadline)}, failing after {@code timeout}. */
    public int awaitExit(Duration timeout) {
        return awaitExit(Deadline.of(this + " to exit", timeout));
    }

    /**
     * Waits for it to exit, failing unless it exited 0 having printed "OK" (what a child's main
     * prints when its checks passed); returns its output.
     */
    public String awaitOk(Deadline deadline) {
        int rc = awaitExit(deadline);
        String out = output();
        if (rc != 0) throw new AssertionError(this + " exited " + rc + "; " + tail());
        if (!out.contains("OK")) throw new AssertionError(this + " exited 0 without printing OK; " + tail());
        return out;
    }

    /** As {@link #awaitOk(Deadline)}, failing after {@code timeout}. */
    public String awaitOk(Duration timeout) {
        return awaitOk(Deadline.of(this + " to exit", timeout));
    }

    /** {@link #awaitOk} on each of {@code children}, all within {@code timeout}; fails with the first that did not pass. */
    public static void awaitAllOk(Collection<ChildProcess> children, Duration timeout) {
        Deadline d = Deadline.of(children.size() + " children to exit", timeout);
        for (ChildProcess c : children) c.awaitOk(d);
    }

    /**
     * Waits until its output contains {@code text} (a line the child prints when it has reached a
     * point: "IN-FLIGHT"), and returns the output. Fails, with the output's tail, if the child
     * exits first or {@code deadline} passes (it is not killed: the caller's close does that).
     */
    public String awaitOutput(String text, Deadline deadline) {
        while (true) {
            boolean exited = !process.isAlive();
            String out = output();
            if (out.contains(text)) return out;
            if (exited) {
                joinPumps();
                if (output().contains(text)) return output();
                throw new AssertionError(this + " exited " + process.exitValue() + " before printing '" + text + "'; " + tail());
            }
            deadline.check(() -> this + " printing '" + text + "'; " + tail());
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + this + " to print '" + text + "'", e);
            }
        }
    }

    /** As {@link #awaitOutput(String, Deadline)}, failing after {@code timeout}. */
    public String awaitOutput(String text, Duration timeout) {
        return awaitOutput(text, Deadline.of(this + " to print '" + text + "'", timeout));
    }

    // ## Ending ##

    /**
     * The JVMs this child started (the JVM itself, or those its launcher ran) still running after
     * up to {@code wait}: for a test that checks a launcher ended every rank. Empty for a
     * {@link #command} child, which carries no tag.
     */
    public List<ProcessHandle> leftovers(Duration wait) {
        if (tag == null) return List.of();
        Duration w = wait.isZero() || wait.isNegative() ? Duration.ofNanos(1) : wait;
        Deadline d = Deadline.of("the JVMs of " + this + " to end", w);
        while (true) {
            List<ProcessHandle> left = tagged();
            if (left.isEmpty() || d.expired()) return left;
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return left;
            }
        }
    }

    /**
     * Kills it with SIGKILL, and every process under it (and, for a launched JVM, every JVM with
     * its tag, wherever the launcher left it), and waits up to 10 s for them to go. A child that
     * has exited is left as it is.
     */
    public void kill() {
        List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
        if (launched) tree.addAll(tagged());
        tree.forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        Deadline d = Deadline.of(this + " and its processes to end after SIGKILL", KILL_WAIT);
        try {
            process.waitFor(d.remainingNanos(), TimeUnit.NANOSECONDS);
            for (ProcessHandle p : tree) {
                if (p.isAlive()) p.onExit().get(d.remainingNanos(), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // still running after 10 s: close() reports nothing more useful than the test's own failure
        }
        joinPumps();
    }

    /** Kills the child and its processes if any are still running; removes a temporary output file. */
    @Override
    public void close() {
        if (process.isAlive() || (launched && !tagged().isEmpty())) kill();
        else joinPumps();
        if (temporaryOutput) output.delete();
    }

    @Override
    public String toString() {
        return "child '" + name + "' (pid " + process.pid() + ")";
    }

    // ## Internals ##

    private List<ProcessHandle> tagged() {
        String mark = "-D" + TAG_PROPERTY + "=" + tag;
        return ProcessHandle.allProcesses()
                .filter(ProcessHandle::isAlive)
                // The command line, not arguments(): the JDK gives no arguments for a command line over a page
                // (a long class path), and its first page, which holds the tag, as the command line.
                .filter(p -> p.info().commandLine().map(c -> c.contains(mark)).orElse(false))
                .toList();
    }

    private void joinPumps() {
        for (Thread t : pumps) {
            try {
                t.join(1_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private Thread pump(InputStream from, File to, PrintStream echo, String prefix) {
        Thread t = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(from, StandardCharsets.UTF_8));
                 OutputStream file = new FileOutputStream(to)) {
                for (String line; (line = in.readLine()) != null; ) {
                    file.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                    file.flush();
                    echo.println(prefix + line);
                }
            } catch (IOException e) {
                echo.println(prefix + "(reading the output failed: " + e + ")");
            }
        }, "child-output-" + name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void tail(StringBuilder m, String what, File f) {
        if (m.length() > 0) m.append('\n');
        String text = read(f);
        if (text.isEmpty()) {
            m.append("its ").append(what).append(" (").append(f).append(") is empty");
            return;
        }
        List<String> lines = text.lines().toList();
        int from = Math.max(0, lines.size() - TAIL_LINES);
        m.append("its ").append(what).append(from == 0 ? "" : ", last " + TAIL_LINES + " of " + lines.size() + " lines,")
                .append(" (").append(f).append("):\n").append(String.join("\n", lines.subList(from, lines.size())));
    }

    private static String read(File f) {
        try {
            return f.exists() ? new String(Files.readAllBytes(f.toPath()), StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "(cannot read " + f + ": " + e + ")";
        }
    }

    private static String safe(String s) {
        return s.replaceAll("[^A-Za-z0-9._-]", "_");
    }
}
