package braid.testsupport.surface.good;

/**
 * A fixture shaped as Kotlin compiles a companion whose member is {@code @JvmStatic}: the static
 * form on the class beside the instance one on {@code Companion}; and a synthetic mangled member
 * ({@code @JvmSynthetic}), which Java cannot call.
 */
public class StaticCompanionApi {
    public static final Companion Companion = new Companion();

    public static StaticCompanionApi create() {
        return Companion.create();
    }

    public static final class Companion {
        public StaticCompanionApi create() {
            return new StaticCompanionApi();
        }
    }
}
