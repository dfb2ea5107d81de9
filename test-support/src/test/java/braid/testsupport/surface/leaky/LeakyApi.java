package braid.testsupport.surface.leaky;

/**
 * A fixture that shows Java what Kotlin would leak: a mangled internal member (public in
 * bytecode) and a companion member reached only as {@code LeakyApi.Companion.create()}.
 */
public class LeakyApi {
    public static final Companion Companion = new Companion();

    public void guard$braid_mpi_shim() {
    }

    public static final class Companion {
        public LeakyApi create() {
            return new LeakyApi();
        }
    }
}
