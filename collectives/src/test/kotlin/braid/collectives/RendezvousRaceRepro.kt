package braid.collectives

import io.kotest.core.spec.style.FunSpec

/**
 * Not part of the suite (no *Test / *IT name): the reproducer of a race seen only when messages
 * go by rendezvous between in-process shm endpoints (eager size 1 KiB here): about one allreduce
 * in a hundred of 5003 INT64 elements on 3 ranks ends with one block reduced from a stale or
 * foreign buffer, under recursive doubling as under the ring; with every message eager (64 KiB)
 * none in 450. No completion arrives stale or with a wrong tag (checked by instrumenting
 * DeferredWorkQueue.succeeded), so the suspect is the shm rendezvous data path under deferred
 * work. Run: `mvn -o -q -B test -pl collectives -am -Dtest=RendezvousRaceRepro -Dsurefire.failIfNoSpecifiedTests=false`;
 * it fails listing the mismatches (it printed them and passed before).
 */
class RendezvousRaceRepro : FunSpec({
    test("allreduce of 5003 INT64 on 3 in-process shm ranks with rendezvous messages, 150 times per algorithm") {
        for (fi in 0..1) collectiveFabric(3, ringCapacity = 1 shl 16, eagerSize = 1024).use { f ->
            val groups = f.join(JoinOptions.DEFAULT.withTuning(Matrix.FORCED[fi]))
            val mismatches = java.util.concurrent.ConcurrentLinkedQueue<String>()
            onEveryRank(groups) { g ->
                val count = 5003
                for (iter in 0 until 150) {
                    val send = Reference.buffer(count * 8); val recv = Reference.buffer(count * 8)
                    for (i in 0 until count) send.putLong(i * 8, (g.rank + 1).toLong() shl (i % 3 * 8))
                    g.startAllreduce(send, 0, recv, 0, count, Datatype.INT64, ReduceOp.SUM).waitFor(10000)
                    val bad = (0 until count).filter { recv.getLong(it * 8) != 6L shl (it % 3 * 8) }
                    if (bad.isNotEmpty()) mismatches += "algorithm ${g.tuning.forced(CollectiveOp.ALLREDUCE)} rank ${g.rank} call $iter: ${bad.size} bad from ${bad.first()} to ${bad.last()}: got ${recv.getLong(bad.first() * 8)} want ${6L shl (bad.first() % 3 * 8)}"
                }
            }
            mismatches.forEach(::println)
            check(mismatches.isEmpty()) { "${mismatches.size} allreduces reduced a stale or foreign block; the first: ${mismatches.first()}" }
        }
    }
})
