package braid.samples

import java.io.ByteArrayOutputStream
import java.io.PrintStream

/** What one `braid` command run in this JVM did: its exit status and everything it printed. */
class BraidResult(val status: Int, val out: String, val err: String)

/**
 * Runs `braid ARGS…` in this JVM ([BraidCommand.run]) with its output captured, reading no environment (the caller's
 * `BRAID_*` variables must not change what the tests see).
 */
fun braid(vararg args: String): BraidResult {
    val out = ByteArrayOutputStream()
    val err = ByteArrayOutputStream()
    val status =
        PrintStream(out, true).use { o ->
            PrintStream(err, true).use { e -> BraidCommand.run(args.toList(), o, e, emptyMap()) }
        }
    return BraidResult(status, out.toString(), err.toString())
}
