package braid.mpi.ompi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Package {@code mpi} has every public class, constructor, method and field of Open MPI's Java API (the list in
 * {@code open-mpi-java-api.txt}), with the same parameter and return types, static-ness, and {@code throws
 * MPIException} exactly where Open MPI declares it: code written against Open MPI's bindings, catch blocks included,
 * compiles here. {@link ApiSurface} is the same promise as a program that the build compiles.
 */
class OmpiApiSurfaceTest {
    private static final Map<String, Class<?>> PRIMITIVES = Map.of("int", int.class, "long", long.class,
            "boolean", boolean.class, "byte", byte.class, "char", char.class, "short", short.class, "float",
            float.class, "double", double.class, "void", void.class);

    private static Class<?> type(String name) throws ClassNotFoundException {
        int dims = 0;
        while (name.endsWith("[]")) {
            name = name.substring(0, name.length() - 2);
            dims++;
        }
        Class<?> c = PRIMITIVES.get(name);
        if (c == null) {
            if (name.endsWith("Buffer") && !name.startsWith("mpi")) c = Class.forName("java.nio." + name);
            else if (name.equals("Object") || name.equals("String") || name.equals("Throwable"))
                c = Class.forName("java.lang." + name);
            else c = Class.forName("mpi." + name.replace('.', '$'));
        }
        for (int i = 0; i < dims; i++) c = Array.newInstance(c, 0).getClass();
        return c;
    }

    private static boolean throwsMpi(Executable e) {
        return Arrays.stream(e.getExceptionTypes()).anyMatch(t -> t.getName().equals("mpi.MPIException"));
    }

    @Test
    void everyPublicMemberOfOpenMpisJavaApiIsThereWithItsSignatureAndThrowsClause() throws Exception {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                OmpiApiSurfaceTest.class.getResourceAsStream("open-mpi-java-api.txt"), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("#") || line.isBlank()) continue;
                String[] f = line.split("\\|", -1);
                String owner = f[0], kind = f[1], type = f[3], name = f[4];
                boolean isStatic = f[2].equals("static"), throwsIt = f[6].equals("MPIException");
                String what = owner + "." + name + "(" + f[5] + ")";
                checked++;
                Class<?> c;
                try {
                    c = type(owner);
                } catch (ClassNotFoundException e) {
                    problems.add(what + ": class mpi." + owner + " is missing");
                    continue;
                }
                if (!Modifier.isPublic(c.getModifiers())) problems.add(owner + " is not public");
                List<Class<?>> params = new ArrayList<>();
                boolean generic = false;
                for (String p : f[5].isEmpty() ? new String[0] : f[5].split(",")) {
                    if (p.length() == 1) generic = true;
                    else params.add(type(p));
                }
                if (generic) continue;
                Class<?>[] ps = params.toArray(new Class<?>[0]);
                try {
                    switch (kind) {
                        case "field": {
                            Field fl = c.getField(name);
                            if (Modifier.isStatic(fl.getModifiers()) != isStatic) problems.add(what + ": static differs");
                            if (!fl.getType().equals(type(type))) problems.add(what + ": type " + fl.getType() + ", not " + type);
                            break;
                        }
                        case "ctor": {
                            Constructor<?> k = c.getConstructor(ps);
                            if (throwsMpi(k) != throwsIt) problems.add(what + ": throws MPIException " + (throwsIt ? "missing" : "not in Open MPI's"));
                            break;
                        }
                        default: {
                            Method m = c.getMethod(name, ps);
                            if (Modifier.isStatic(m.getModifiers()) != isStatic) problems.add(what + ": static differs");
                            if (type.length() > 1 && !m.getReturnType().equals(type(type)))
                                problems.add(what + ": returns " + m.getReturnType().getSimpleName() + ", not " + type);
                            if (throwsMpi(m) != throwsIt) problems.add(what + ": throws MPIException " + (throwsIt ? "missing" : "not in Open MPI's"));
                        }
                    }
                } catch (NoSuchMethodException | NoSuchFieldException e) {
                    problems.add(what + ": missing (" + kind + ")");
                }
            }
        }
        assertEquals(List.of(), problems, problems.size() + " of " + checked + " members differ:\n" + String.join("\n", problems));
    }
}
