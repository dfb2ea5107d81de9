package braid.provider.shm

import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.security.SecureRandom
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/**
 * The job key on the shm rail: a sender proves it holds the receiver's job key before the
 * receiver reads anything it sent, as the tcp handshake does on the wire
 * ([braid.provider.tcp.TcpHandshake]).
 *
 * A file in /dev/shm is readable by every process of its user, so the key is never written
 * there, nor anything from which it can be checked offline without a nonce. Instead:
 * ```
 * receiver, at enable:   nonce_r (32 random bytes)  -> its endpoint file (EndpointFileDescriptor)
 * sender, at connect:    reads nonce_r; writes
 *                        proof = HMAC(K, "braid-shm channel" ‖ 0 ‖ receiver name ‖ 0 ‖ sender name ‖ 0 ‖ nonce_r)
 *                        into the channel file's header (ChannelFileDescriptor), then announces it
 * receiver, at attach:   recomputes the proof; a mismatch marks the channel refused (receiver
 *                        state 3), logs, and reads nothing from it
 * ```
 * K = SHA-256("braid-shm-job-key" ‖ 0 ‖ key in UTF-8), so the empty key (none set) is a key like
 * any other and a peer with none is refused by a receiver that has one. The nonce is fresh to
 * each receiving endpoint and the proof names both ends, so a proof copied from another
 * channel, or from an earlier endpoint, does not check out. Proofs are compared in constant time.
 *
 * What this is, and is not: a job boundary between processes on one host that run with different
 * keys (or none), so that they never match each other's messages. Processes of one user can map
 * each other's files and read each other's memory whatever this layout says; keeping out a
 * hostile process of the same user is the operating system's work (separate users), not this.
 * Off the hot path: allocation here is fine.
 */
internal class ShmJobKey(jobKey: String) {
    private val key = SecretKeySpec(
        MessageDigest.getInstance("SHA-256").digest("braid-shm-job-key\u0000$jobKey".toByteArray(StandardCharsets.UTF_8)),
        "HmacSHA256",
    )

    /** The proof a sender named [sender] gives a receiver named [receiver] that published [nonce]. */
    fun proof(receiver: String, sender: String, nonce: ByteArray): ByteArray {
        val m = Mac.getInstance("HmacSHA256")
        m.init(key)
        m.update("braid-shm channel\u0000$receiver\u0000$sender\u0000".toByteArray(StandardCharsets.UTF_8))
        m.update(nonce)
        return m.doFinal().also { check(it.size == PROOF_LENGTH) }
    }

    /** Whether [proof] is the one a sender named [sender] holding this key gives [receiver] for [nonce]. */
    fun verify(receiver: String, sender: String, nonce: ByteArray, proof: ByteArray): Boolean =
        MessageDigest.isEqual(proof, proof(receiver, sender, nonce))

    companion object {
        const val NONCE_LENGTH = 32
        const val PROOF_LENGTH = 32
        private val random = SecureRandom()

        fun nonce(): ByteArray = ByteArray(NONCE_LENGTH).also { random.nextBytes(it) }
    }
}
