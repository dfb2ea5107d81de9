package braid.collectives

import braid.core.AvSet
import braid.core.TestFabric
import braid.testsupport.Deadline
import java.time.Duration
import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * [count] shm endpoints in this process, each in every AV (itself included): rail-core's one [TestFabric]. The defaults
 * (1 KiB eager, 64 KiB rings) put every message past 1 KiB on the rendezvous path, so the in-process specs cover it as
 * well as the eager one.
 */
fun collectiveFabric(count: Int, ringCapacity: Int = 1 shl 16, eagerSize: Int = 1024): TestFabric =
    TestFabric(count, ringCapacity = ringCapacity, eagerSize = eagerSize)

/** An AV set of every address in this node's AV. */
val TestFabric.Node.set: AvSet
    get() = av.avSet(*LongArray(av.count) { it.toLong() })

/** Joins every member's group over [members] (driving all of them from this thread). */
fun TestFabric.join(
    options: JoinOptions = JoinOptions.DEFAULT,
    members: List<Int> = nodes.indices.toList(),
): List<CollectiveGroup> {
    val joins =
        members.map { i ->
            Collectives.startJoin(
                nodes[i].ep,
                nodes[i].av.avSet(*members.map { it.toLong() }.toLongArray()),
                null,
                null,
                options,
            )
        }
    val deadline = Deadline.of("every member's join", Duration.ofSeconds(30))
    val groups = arrayOfNulls<CollectiveGroup>(members.size)
    while (groups.any { it == null }) {
        for (i in members.indices) if (groups[i] == null) groups[i] = joins[i].test()
        deadline.check { "${groups.count { it != null }} of ${members.size} joined" }
    }
    return groups.map { it!! }
}

/** Runs [body] for every group on its own thread, failing with the first failure (or after [seconds]). */
fun <T> onEveryRank(groups: List<CollectiveGroup>, seconds: Long = 300, body: (CollectiveGroup) -> T): List<T> {
    val pool = Executors.newFixedThreadPool(groups.size)
    try {
        val futures = groups.map { g -> pool.submit(Callable { body(g) }) }
        return futures.map { it.get(seconds, TimeUnit.SECONDS) }
    } finally {
        pool.shutdownNow()
        check(pool.awaitTermination(10, TimeUnit.SECONDS)) { "rank threads still running after the test" }
    }
}
