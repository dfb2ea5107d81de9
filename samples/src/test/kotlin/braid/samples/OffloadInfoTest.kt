package braid.samples

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

/** `braid info --config` shows a link's collective offload pairing. */
class OffloadInfoTest :
    FunSpec({
        test("info --config shows the offload provider paired with a link, its operations and slot") {
            val r = braid("info", "--config", "config/collectives.conf")
            withClue(r.err) { r.status shouldBe 0 }
            r.out shouldContain "link 'shm+tcp:lo' (shm+tcp:lo), policy LOCALITY: can open (chosen)\n"
            r.out shouldContain
                "    offload shm paired with link 'shm+tcp:lo': allreduce, barrier, broadcast, slot 64 KiB, at least 2 members on a host, hierarchical across hosts\n"
        }
    })
