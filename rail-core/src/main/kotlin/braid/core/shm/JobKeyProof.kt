package braid.core.shm

import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.security.SecureRandom
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/**
 * Proof that a process holds the job key ([braid.core.CoreParams.JOB_KEY]), for processes that meet through shared
 * memory: the shm rail's channels and endpoints, the collective offload's segments. A file in the shared-memory
 * directory is readable by every process of its user, so the key is never written there, nor anything from which it can
 * be checked offline without a nonce. Instead the side that is checked publishes a fresh [nonce] and
 *
 * ```
 * proof = HMAC(K, label ‖ 0 ‖ name₁ ‖ 0 ‖ … ‖ nameₙ ‖ 0 ‖ nonce)
 * K     = SHA-256("braid-shm-job-key" ‖ 0 ‖ key in UTF-8)
 * ```
 *
 * and the checking side recomputes it ([verify], in constant time). The label says what is proven (each use has its
 * own, so a proof made for one never checks out as another) and the names say between whom, so a proof copied from
 * another channel or an earlier endpoint fails. The empty key (none set) is a key like any other: a process with none
 * is refused by one with a key.
 *
 * What this is, and is not: a job boundary between processes on one host that run with different keys (or none), so
 * that they never use each other's messages or segments. Processes of one user can map each other's files and read each
 * other's memory whatever the files say; keeping out a hostile process of the same user is the operating system's work
 * (separate users). Off the hot path: allocation here is fine.
 */
public class JobKeyProof(jobKey: String) {
    private val key =
        SecretKeySpec(
            MessageDigest.getInstance("SHA-256")
                .digest("braid-shm-job-key\u0000$jobKey".toByteArray(StandardCharsets.UTF_8)),
            "HmacSHA256",
        )

    /** The proof over [label], [names] and [nonce] ([PROOF_LENGTH] bytes). */
    public fun proof(label: String, nonce: ByteArray, vararg names: String): ByteArray {
        val m = Mac.getInstance("HmacSHA256")
        m.init(key)
        m.update(
            buildString {
                    append(label).append('\u0000')
                    for (n in names) append(n).append('\u0000')
                }
                .toByteArray(StandardCharsets.UTF_8)
        )
        m.update(nonce)
        return m.doFinal().also { check(it.size == PROOF_LENGTH) }
    }

    /** Whether [proof] is the one a holder of this key gives over [label], [names] and [nonce]. */
    public fun verify(label: String, nonce: ByteArray, proof: ByteArray, vararg names: String): Boolean =
        MessageDigest.isEqual(proof, proof(label, nonce, *names))

    /** Never the key. */
    override fun toString(): String = "JobKeyProof(key hidden)"

    public companion object {
        /** Bytes of a [nonce]. */
        public const val NONCE_LENGTH: Int = 32

        /** Bytes of a [proof]. */
        public const val PROOF_LENGTH: Int = 32

        private val random = SecureRandom()

        /** A fresh random nonce of [NONCE_LENGTH] bytes. */
        @JvmStatic public fun nonce(): ByteArray = ByteArray(NONCE_LENGTH).also { random.nextBytes(it) }
    }
}
