package braid.testsupport;

import kotlin.Metadata;
import kotlin.metadata.Attributes;
import kotlin.metadata.KmClass;
import kotlin.metadata.KmConstructor;
import kotlin.metadata.KmFunction;
import kotlin.metadata.KmPackage;
import kotlin.metadata.KmProperty;
import kotlin.metadata.Visibility;
import kotlin.metadata.jvm.JvmExtensionsKt;
import kotlin.metadata.jvm.JvmMethodSignature;
import kotlin.metadata.jvm.KotlinClassMetadata;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Checks a module's API as a Java caller sees it: every public class and member that Kotlin
 * declares public or protected (read from the Kotlin metadata, so Kotlin-{@code internal}
 * declarations, which are public in bytecode, are left out, as are {@code @JvmSynthetic} ones
 * and {@code suspend} functions, which are for Kotlin callers) must not
 * <ul>
 *   <li>take or return a Kotlin function type ({@code kotlin.jvm.functions.Function*}),</li>
 *   <li>take or return {@code kotlin.Unit},</li>
 *   <li>take an Agrona type ({@code org.agrona.*}) unless the same class has a method of the
 *       same name without Agrona types — for an Agrona buffer, one taking a
 *       {@code java.nio.ByteBuffer}.</li>
 * </ul>
 * and every public class must not show Java, whatever Kotlin declares,
 * <ul>
 *   <li>a public or protected member with a mangled name ({@code guard$braid_mpi_shim}: a Kotlin
 *       {@code internal} member, public in bytecode; mark it {@code @JvmSynthetic}, or
 *       {@code @PublishedApi} where an inline function needs it),</li>
 *   <li>a member reached only through {@code Companion} ({@code Mpi.Companion.init(…)}: make it
 *       {@code @JvmStatic} or {@code @JvmField}, or {@code const}).</li>
 * </ul>
 * Point it at any module's classes: {@code JavaSurface.problems(JavaSurface.classesOf(SomeClass.class), "braid")}.
 */
public final class JavaSurface {
    private JavaSurface() {
    }

    /** The directory (or jar) [anyClass] was loaded from: a module's {@code target/classes}. */
    public static Path classesOf(Class<?> anyClass) {
        try {
            return Paths.get(anyClass.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every problem found in the classes under {@code root} whose package starts with {@code packagePrefix}, one line each. */
    public static List<String> problems(Path root, String packagePrefix) throws IOException {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        List<String> out = new ArrayList<>();
        Path dir = root.resolve(packagePrefix.replace('.', '/'));
        List<Path> files;
        try (Stream<Path> s = Files.walk(dir)) {
            files = s.filter(p -> p.toString().endsWith(".class")).sorted().collect(Collectors.toList());
        }
        for (Path f : files) {
            String name = root.relativize(f).toString().replace('/', '.').replaceAll("\\.class$", "");
            Class<?> c;
            try {
                c = Class.forName(name, false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                out.add(name + ": cannot be loaded: " + e);
                continue;
            }
            check(c, loader, out);
        }
        return out;
    }

    /** Whether {@code c} and every class enclosing it are public to Java and to Kotlin. */
    private static boolean visible(Class<?> c, ClassLoader loader) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            if (!Modifier.isPublic(k.getModifiers()) || k.isSynthetic() || k.isAnonymousClass() || k.isLocalClass()) return false;
            Metadata md = k.getAnnotation(Metadata.class);
            if (md == null) continue;
            KotlinClassMetadata km = KotlinClassMetadata.readLenient(md);
            if (km instanceof KotlinClassMetadata.SyntheticClass) return false;
            if (km instanceof KotlinClassMetadata.MultiFileClassPart) return false; // reached through its facade
            if (km instanceof KotlinClassMetadata.Class && !exposed(Attributes.getVisibility(((KotlinClassMetadata.Class) km).getKmClass()))) return false;
        }
        return true;
    }

    private static boolean exposed(Visibility v) {
        return v == Visibility.PUBLIC || v == Visibility.PROTECTED;
    }

    /** JVM signatures (name + descriptor) of the Kotlin declarations of {@code c} that are not public or protected. */
    private static Set<String> hidden(Class<?> c, ClassLoader loader) {
        Set<String> out = new HashSet<>();
        Metadata md = c.getAnnotation(Metadata.class);
        if (md == null) return out;
        KotlinClassMetadata km = KotlinClassMetadata.readLenient(md);
        if (km instanceof KotlinClassMetadata.Class) {
            KmClass k = ((KotlinClassMetadata.Class) km).getKmClass();
            for (KmConstructor ctor : k.getConstructors()) {
                if (!exposed(Attributes.getVisibility(ctor))) add(out, JvmExtensionsKt.getSignature(ctor));
            }
            collect(k.getFunctions(), k.getProperties(), out);
        } else if (km instanceof KotlinClassMetadata.FileFacade) {
            KmPackage p = ((KotlinClassMetadata.FileFacade) km).getKmPackage();
            collect(p.getFunctions(), p.getProperties(), out);
        } else if (km instanceof KotlinClassMetadata.MultiFileClassFacade) {
            for (String part : ((KotlinClassMetadata.MultiFileClassFacade) km).getPartClassNames()) {
                try {
                    out.addAll(hidden(Class.forName(part.replace('/', '.'), false, loader), loader));
                } catch (ClassNotFoundException e) {
                    throw new IllegalStateException("facade " + c.getName() + " names a missing part " + part, e);
                }
            }
        } else if (km instanceof KotlinClassMetadata.MultiFileClassPart) {
            KmPackage p = ((KotlinClassMetadata.MultiFileClassPart) km).getKmPackage();
            collect(p.getFunctions(), p.getProperties(), out);
        }
        return out;
    }

    private static void collect(List<KmFunction> functions, List<KmProperty> properties, Set<String> out) {
        for (KmFunction f : functions) {
            if (!exposed(Attributes.getVisibility(f))) add(out, JvmExtensionsKt.getSignature(f));
        }
        for (KmProperty p : properties) {
            if (!exposed(Attributes.getVisibility(p))) {
                add(out, JvmExtensionsKt.getGetterSignature(p));
                add(out, JvmExtensionsKt.getSetterSignature(p));
            }
        }
    }

    private static void add(Set<String> out, JvmMethodSignature s) {
        if (s != null) out.add(s.getName() + s.getDescriptor());
    }

    private static void check(Class<?> c, ClassLoader loader, List<String> out) {
        if (!visible(c, loader)) return;
        mangled(c, out);
        companion(c, loader, out);
        Set<String> hidden = hidden(c, loader);
        List<Executable> members = new ArrayList<>();
        for (Method m : c.getDeclaredMethods()) {
            if (m.isSynthetic() || m.isBridge() || m.getName().contains("$")) continue;
            if (!Modifier.isPublic(m.getModifiers()) && !Modifier.isProtected(m.getModifiers())) continue;
            if (hidden.contains(m.getName() + descriptor(m))) continue;
            Class<?>[] p = m.getParameterTypes();
            if (p.length > 0 && p[p.length - 1].getName().equals("kotlin.coroutines.Continuation")) continue; // suspend: for Kotlin
            members.add(m);
        }
        for (Constructor<?> k : c.getDeclaredConstructors()) {
            if (k.isSynthetic() || (!Modifier.isPublic(k.getModifiers()) && !Modifier.isProtected(k.getModifiers()))) continue;
            if (hidden.contains("<init>" + descriptor(k))) continue;
            Class<?>[] p = k.getParameterTypes();
            if (p.length > 0 && p[p.length - 1].getName().equals("kotlin.jvm.internal.DefaultConstructorMarker")) continue;
            members.add(k);
        }
        for (Executable e : members) {
            String where = c.getName() + "." + (e instanceof Constructor ? "<init>" : e.getName()) + params(e);
            List<Type> types = new ArrayList<>(List.of(e.getGenericParameterTypes()));
            if (e instanceof Method) types.add(((Method) e).getGenericReturnType());
            for (Type t : types) {
                String s = t.getTypeName();
                if (s.contains("kotlin.jvm.functions.Function") || s.matches(".*\\bkotlin\\.Function\\b.*")) {
                    out.add(where + ": uses a Kotlin function type (" + s + "); take a java.util.function interface, or hide it with @JvmSynthetic beside a Java form");
                } else if (s.contains("kotlin.Unit")) {
                    out.add(where + ": uses kotlin.Unit (" + s + "); Java callers would have to return Unit.INSTANCE");
                }
            }
            Set<String> agrona = new java.util.TreeSet<>();
            boolean buffer = false;
            for (Class<?> p : e.getParameterTypes()) {
                if (!p.getName().startsWith("org.agrona.")) continue;
                agrona.add(p.getName());
                buffer |= p.getName().contains("Buffer");
            }
            if (!agrona.isEmpty() && !hasAlternative(c, e, buffer, members)) {
                out.add(where + ": takes " + String.join(", ", agrona) + " with no " + (buffer ? "ByteBuffer " : "") + "alternative of the same name");
            }
        }
        Collections.sort(out);
    }

    /** Public or protected members of {@code c} whose names Kotlin mangled ({@code name$module}): internals Java can call. */
    private static void mangled(Class<?> c, List<String> out) {
        boolean data = false;
        Metadata md = c.getAnnotation(Metadata.class);
        if (md != null && KotlinClassMetadata.readLenient(md) instanceof KotlinClassMetadata.Class) {
            data = Attributes.isData(((KotlinClassMetadata.Class) KotlinClassMetadata.readLenient(md)).getKmClass());
        }
        List<java.lang.reflect.Member> members = new ArrayList<>();
        members.addAll(List.of(c.getDeclaredMethods()));
        members.addAll(List.of(c.getDeclaredFields()));
        for (java.lang.reflect.Member m : members) {
            int mod = m.getModifiers();
            if (m.isSynthetic() || !(Modifier.isPublic(mod) || Modifier.isProtected(mod)) || !m.getName().contains("$")) continue;
            // The copy Kotlin generates for a data class with an internal constructor is internal too, and cannot
            // carry @JvmSynthetic: Java sees copy$module. The constructor's checks are what it protects.
            if (data && m.getName().startsWith("copy$")) continue;
            String what = m instanceof Method ? m.getName() + params((Method) m) : m.getName();
            out.add(c.getName() + "." + what + ": a mangled name (a Kotlin internal member, public in bytecode); "
                + "mark it @JvmSynthetic (@PublishedApi where an inline function needs it), or make it private");
        }
    }

    /**
     * Members of {@code c}'s companion that Java reaches only as {@code C.Companion.member()}: a
     * public companion function or property accessor with no static form of the same name and
     * parameters on {@code c}.
     */
    private static void companion(Class<?> c, ClassLoader loader, List<String> out) {
        java.lang.reflect.Field field;
        try {
            field = c.getDeclaredField("Companion");
        } catch (NoSuchFieldException e) {
            return;
        }
        if (!Modifier.isStatic(field.getModifiers()) || !Modifier.isPublic(field.getModifiers())) return;
        Class<?> comp = field.getType();
        if (comp.getEnclosingClass() != c) return;
        Set<String> hidden = hidden(comp, loader);
        Set<String> statics = new HashSet<>();
        for (Method m : c.getDeclaredMethods()) {
            if (Modifier.isStatic(m.getModifiers()) && Modifier.isPublic(m.getModifiers())) statics.add(m.getName() + descriptor(m));
        }
        for (Method m : comp.getDeclaredMethods()) {
            int mod = m.getModifiers();
            if (m.isSynthetic() || m.isBridge() || !Modifier.isPublic(mod) || Modifier.isStatic(mod) || m.getName().contains("$")) continue;
            String sig = m.getName() + descriptor(m);
            if (hidden.contains(sig) || statics.contains(sig)) continue;
            // kotlinx.serialization's generated Companion.serializer(): for Kotlin's serialization calls, not for Java users
            if (m.getName().equals("serializer") && m.getReturnType().getName().equals("kotlinx.serialization.KSerializer")) continue;
            Class<?>[] p = m.getParameterTypes();
            if (p.length > 0 && p[p.length - 1].getName().equals("kotlin.coroutines.Continuation")) continue; // suspend: for Kotlin
            out.add(c.getName() + ".Companion." + m.getName() + params(m) + ": reached only through Companion; "
                + "make it @JvmStatic (a property: @JvmField, const or @JvmStatic)");
        }
    }

    private static boolean hasAlternative(Class<?> c, Executable e, boolean needByteBuffer, List<Executable> members) {
        for (Executable o : members) {
            if (o == e || o.getClass() != e.getClass() || !o.getName().equals(e.getName())) continue;
            boolean agrona = false;
            boolean byteBuffer = false;
            for (Class<?> p : o.getParameterTypes()) {
                if (p.getName().startsWith("org.agrona.")) agrona = true;
                if (p == java.nio.ByteBuffer.class) byteBuffer = true;
            }
            if (!agrona && (byteBuffer || !needByteBuffer)) return true;
        }
        return false;
    }

    private static String params(Executable e) {
        return Stream.of(e.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", ", "(", ")"));
    }

    private static String descriptor(Executable e) {
        StringBuilder b = new StringBuilder("(");
        for (Class<?> p : e.getParameterTypes()) b.append(descriptor(p));
        b.append(')');
        b.append(e instanceof Method ? descriptor(((Method) e).getReturnType()) : "V");
        return b.toString();
    }

    private static String descriptor(Class<?> c) {
        if (c.isArray()) return "[" + descriptor(c.getComponentType());
        if (c == void.class) return "V";
        if (c == boolean.class) return "Z";
        if (c == byte.class) return "B";
        if (c == char.class) return "C";
        if (c == short.class) return "S";
        if (c == int.class) return "I";
        if (c == long.class) return "J";
        if (c == float.class) return "F";
        if (c == double.class) return "D";
        return "L" + c.getName().replace('.', '/') + ";";
    }
}
