package braid.samples

import java.io.ByteArrayOutputStream
import java.io.PrintStream

/** What one `braid` command run in this JVM did: its exit [status] and what it printed. */
internal class BraidRun(val status: Int, val out: String, val err: String) {
    companion object {
        /** Runs `braid args…` in this JVM, capturing stdout and stderr. */
        fun braid(vararg args: String): BraidRun {
            val out = ByteArrayOutputStream()
            val err = ByteArrayOutputStream()
            val status = PrintStream(out, true).use { o -> PrintStream(err, true).use { e -> BraidCommand.run(args.toList(), o, e) } }
            return BraidRun(status, out.toString(), err.toString())
        }
    }
}
