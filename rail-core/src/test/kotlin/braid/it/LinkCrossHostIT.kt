package braid.it

import io.kotest.core.annotation.EnabledIf
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.time.Duration
import kotlin.time.Duration.Companion.minutes

/**
 * Link endpoints between hosts: processes in network namespaces ([NetnsHosts]), each host with an identity of its own,
 * so the link sends over shm to a process on its host and over tcp to the others. Needs root (skipped, saying so,
 * without it; CI requires it).
 */
@EnabledIf(NetnsUsable::class)
class LinkCrossHostIT :
    FunSpec({
        test(
                "four processes on two hosts exchange tagged and untagged messages over link endpoints: shm carries same-host traffic, tcp the rest, each message once and in order"
            )
            .config(timeout = 10.minutes) {
                val dir = Files.createTempDirectory("braid-link-it")
                val count = 1200
                NetnsHosts(2).use { net ->
                    val placement = listOf("a0" to 0, "a1" to 0, "b0" to 1, "b1" to 1)
                    val all = placement.map { (name, host) -> "$name@$host" }
                    val kids =
                        placement.map { (name, host) ->
                            net.start(
                                net.hosts[host],
                                PeerMain::class.java.name,
                                PeerMain.args("link", "mesh", dir, name, count, *all.toTypedArray()),
                                dir.resolve("$name.log").toFile(),
                                jvmArgs = listOf("-Xmx128m", "-XX:MaxDirectMemorySize=200m"),
                            )
                        }
                    for ((kid, p) in kids.zip(placement)) {
                        val out = kid.awaitOk(Duration.ofSeconds(540))
                        println("${p.first} on ${net.hosts[p.second]}:\n${out.trim()}")
                        out shouldContain "OK mesh"
                    }
                }
            }
    })
