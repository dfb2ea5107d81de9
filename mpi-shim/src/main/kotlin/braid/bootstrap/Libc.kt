package braid.bootstrap

import com.sun.jna.Native

/**
 * The few libc calls the bootstrap needs and the JDK does not offer: `read(2)`/`write(2)` on an inherited socket
 * descriptor (`PMI_FD`) and `ioctl(FIONREAD)` on the stderr pipe, through JNA's direct mapping.
 */
internal object Libc {
    private val registered: Boolean by lazy {
        Native.register(Libc::class.java, "c")
        true
    }

    /** Loads libc; a failure names [purpose]. */
    fun ensureRegistered(purpose: String) {
        try {
            check(registered)
        } catch (t: Throwable) {
            throw BootstrapException("cannot load libc through JNA to $purpose: $t", t)
        }
    }

    @JvmStatic external fun read(fd: Int, buf: ByteArray, count: Long): Long

    @JvmStatic external fun write(fd: Int, buf: ByteArray, count: Long): Long

    @JvmStatic external fun close(fd: Int): Int

    @JvmStatic external fun ioctl(fd: Int, request: Long, out: IntArray): Int

    const val EINTR: Int = 4
    const val FIONREAD: Long = 0x541B
}
