package braid.collectives

import braid.core.Braid
import braid.core.Errno
import braid.core.FabricException
import braid.core.Hints
import braid.it.childMain
import java.nio.file.Paths

/**
 * One rank of [CollectivesMultiProcessIT]: `RankMain PROVIDER DIR RANK SIZE MODE`. Publishes its address as
 * DIR/RANK.addr, inserts every rank's address in rank order, joins the group of all, then runs MODE:
 * - `matrix`: the whole [Matrix], then the forced-algorithm cases under every [Matrix.FORCED] tuning;
 * - `quick`: the quick matrix and the forced cases;
 * - `tuning-mismatch`: see [joinRefused];
 * - `victim` / `survivor`: allreduces in a loop, printing [IN_FLIGHT] once one is in flight; the test kills the victim;
 *   a survivor must see its collective fail with an error (not hang) and prints `FAILED-AS-EXPECTED`. Prints a line
 *   starting OK on success; exits 1 with the failure otherwise.
 */
object RankMain {
    /** The hints for [provider]; tcp binds to `BRAID_TCP_IFACE` (a namespace host's interface), else loopback. */
    fun hints(provider: String): Hints =
        when (provider) {
            "shm" -> Hints(provider = "shm")
            "tcp" -> Hints(provider = "tcp", domainName = System.getenv("BRAID_TCP_IFACE") ?: "lo")
            "link" -> Hints(provider = "link").with(braid.provider.link.LinkParams.LINKS, "shm+tcp:lo")
            else -> error("unknown provider '$provider'")
        }

    @JvmStatic fun main(args: Array<String>): Unit = childMain { run(args) }

    private fun run(args: Array<String>) {
        val (provider, dirName, rankS, sizeS, mode) = args
        val dir = Paths.get(dirName)
        val rank = rankS.toInt()
        val size = sizeS.toInt()
        val me = RankEndpoint.open(Braid.getInfo(hints(provider)).first(), dir, rank, size)
        val ep = me.ep
        val set = me.set
        if (mode == "tuning-mismatch") {
            joinRefused(ep, set, rank)
            me.close()
            return
        }
        val group = Collectives.join(ep, set, 60_000)
        check(group.rank == rank) { "joined as rank ${group.rank}, expected $rank" }
        when (mode) {
            "matrix",
            "quick" -> {
                var runs = Matrix(group, quick = mode == "quick").runAll()
                for (t in Matrix.FORCED) runs +=
                    Matrix(Collectives.join(ep, set, 60_000, JoinOptions.DEFAULT.withTuning(t))).allreduceCases()
                println("OK $provider rank $rank of $size: $runs collectives matched the reference")
            }
            "victim",
            "survivor" -> allreduceUntilKilled(group, mode)
            else -> error("unknown mode $mode")
        }
        me.close()
    }

    /**
     * `tuning-mismatch`: the test sets `BRAID_COLL_ALLREDUCE=ring` in one rank's environment only; every rank's join
     * must fail, naming this rank's tuning and the other one, and then a join with the same explicit tuning everywhere
     * must succeed (a failed join leaves the endpoint usable).
     */
    private fun joinRefused(ep: braid.core.Endpoint, set: braid.core.AvSet, rank: Int) {
        val e = runCatching { Collectives.join(ep, set, 60_000) }.exceptionOrNull()
        check(e is FabricException && e.code == Errno.EINVAL) { "rank $rank: the join with differing tunings gave $e" }
        val msg = e.message!!
        check(
            msg.contains("different collective tunings") && msg.contains("allreduce=ring") && msg.contains("forced {}")
        ) {
            "rank $rank: the error does not name both tunings: $msg"
        }
        println("JOIN-REFUSED: $msg")
        val g = Collectives.join(ep, set, 60_000, JoinOptions.DEFAULT.withTuning(CollectiveTuning.DEFAULT))
        g.barrier()
        g.close()
        println("OK rank $rank: the join was refused on every rank, and a join with one tuning then worked")
    }

    /**
     * The line a `victim` or `survivor` prints while one of its allreduces is in flight (see [allreduceUntilKilled]).
     */
    const val IN_FLIGHT: String = "IN-FLIGHT"

    /**
     * `victim` / `survivor`: allreduces in a loop until one fails; a survivor's must fail with an error, not a 30 s
     * time-out, and prints `FAILED-AS-EXPECTED` and OK; the victim's must not fail (the test kills it). A rank prints
     * [IN_FLIGHT] once its first allreduce has completed (the group's connections are up) and while its second is
     * started and not complete. Once every rank has printed it, every rank only loops over allreduces, none of which
     * can complete without the victim: the test kills the victim mid-collective.
     */
    fun allreduceUntilKilled(group: CollectiveGroup, mode: String) {
        val n = 4096
        val send = Reference.buffer(n * 8)
        val recv = Reference.buffer(n * 8)
        var i = 0
        try {
            while (true) {
                // Both forms: a blocking call the offload carries on the caller's thread, and a started one the
                // deferred work carries.
                if (i % 2 == 0) group.allreduce(send, 0, recv, 0, n, Datatype.INT64, ReduceOp.SUM)
                else {
                    val started = group.startAllreduce(send, 0, recv, 0, n, Datatype.INT64, ReduceOp.SUM)
                    if (i == 1)
                        println("$IN_FLIGHT: rank ${group.rank} started allreduce 1 after allreduce 0 completed")
                    started.waitFor(30_000)
                }
                i++
            }
        } catch (e: FabricException) {
            check(mode == "survivor") { "the victim's collective failed: $e" }
            check(e.code != Errno.ETIMEDOUT) { "a survivor waited 30 s: the failure did not reach it ($e)" }
            println("FAILED-AS-EXPECTED after $i allreduces: ${Errno.name(e.code)}: ${e.message}")
            println("OK survivor ${group.rank}")
        }
    }
}
