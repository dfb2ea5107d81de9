package braid.it

import io.kotest.core.annotation.EnabledIf
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.time.Duration
import kotlin.time.Duration.Companion.minutes

/**
 * Links of two network rails between hosts: processes in network namespaces ([NetnsHosts]) whose hosts have two NICs
 * each, on separate networks, joined as `shm+tcp:braid0+tcp:braid1` under the PER_PEER policy. Needs root (skipped,
 * saying so, without it; CI requires it).
 */
@EnabledIf(NetnsUsable::class)
class MultiRailCrossHostIT :
    FunSpec({
        test(
                "four processes on two hosts with two NICs each: every message once and in order, shm for same-host peers, the remote peers spread over both network rails"
            )
            .config(timeout = 10.minutes) {
                val dir = Files.createTempDirectory("braid-rails-it")
                val count = 300
                NetnsHosts(2, nics = 2).use { net ->
                    val placement = listOf("a0" to 0, "a1" to 0, "b0" to 1, "b1" to 1)
                    val all = placement.map { (name, host) -> "$name@$host" }
                    val links = "link:shm+tcp:${NetnsHosts.nicName(0)}+tcp:${NetnsHosts.nicName(1)}"
                    val kids =
                        placement.map { (name, host) ->
                            net.start(
                                net.hosts[host],
                                PeerMain::class.java.name,
                                PeerMain.args(links, "mesh", dir, name, count, *all.toTypedArray()),
                                dir.resolve("$name.log").toFile(),
                                jvmArgs = listOf("-Xmx128m", "-XX:MaxDirectMemorySize=200m"),
                            )
                        }
                    for ((kid, p) in kids.zip(placement)) {
                        val out = kid.awaitOk(Duration.ofSeconds(540))
                        println("${p.first} on ${net.hosts[p.second]}:\n${out.trim()}")
                        out shouldContain "OK mesh"
                        out shouldContain "tcp:braid0"
                        out shouldContain "tcp:braid1"
                    }
                }
            }
    })
