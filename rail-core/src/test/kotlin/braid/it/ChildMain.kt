package braid.it

import kotlin.system.exitProcess

/**
 * The body of a child's `main`: runs [body] and exits 0, or prints FAILED with the stack trace (which
 * [braid.testsupport.ChildProcess.awaitOk] shows) and exits 1.
 */
fun childMain(body: () -> Unit): Nothing {
    try {
        body()
        System.out.flush()
        exitProcess(0)
    } catch (t: Throwable) {
        println("FAILED: $t")
        t.printStackTrace(System.out)
        System.out.flush()
        exitProcess(1)
    }
}
