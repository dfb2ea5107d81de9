package braid.provider.shm

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan

/**
 * The ring warm-up takes every rare branch it exists for, many times (a branch it never took would be compiled as a
 * trap again, and the first ring wrap of a run would throw the receiver's compiled loop away, as it did before).
 */
class ShmRingWarmupTest :
    FunSpec({
        test("the warm-up wraps the ring, fills it, stops reads at their limit and pushes records back") {
            val b = ShmRingWarmup.exercise(200)
            b.wraps shouldBeGreaterThan 100
            b.fulls shouldBeGreaterThan 100
            b.limited shouldBeGreaterThan 100
            b.pushedBack shouldBeGreaterThan 100
        }
    })
