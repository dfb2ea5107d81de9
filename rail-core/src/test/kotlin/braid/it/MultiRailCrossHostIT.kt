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

        test(
                "a NIC cut between two halves of a stream: the sender's peer moves to the surviving rail, every message arrives once and in order"
            )
            .config(timeout = 10.minutes) {
                val dir = Files.createTempDirectory("braid-rails-failover-it")
                val count = 400
                NetnsHosts(2, nics = 2).use { net ->
                    val links = "link:tcp:${NetnsHosts.nicName(0)}+tcp:${NetnsHosts.nicName(1)}"
                    // A short time-out: a cut NIC drops packets, and the keepalive is what notices.
                    val env = mapOf("BRAID_TCP_TIMEOUT_MS" to "1500")
                    val jvm = listOf("-Xmx128m", "-XX:MaxDirectMemorySize=200m")
                    val receiver =
                        net.start(
                            net.hosts[1],
                            PeerMain::class.java.name,
                            PeerMain.args(links, "recv", dir, "r", count, "s"),
                            dir.resolve("r.log").toFile(),
                            env,
                            jvm,
                        )
                    val sender =
                        net.start(
                            net.hosts[0],
                            PeerMain::class.java.name,
                            PeerMain.args(links, "failover-send", dir, "s", "r", 0, count),
                            dir.resolve("s.log").toFile(),
                            env,
                            jvm,
                        )
                    val deadline = braid.testsupport.Deadline.of("the sender's first half", Duration.ofSeconds(240))
                    while (!Rendezvous.marked(dir, "s-phase1")) {
                        deadline.check { "sender log: ${dir.resolve("s.log").toFile().readText()}" }
                        Thread.sleep(20)
                    }
                    // Both ends pin each other to the first rail (equal weights): cut the receiver host's NIC 0.
                    net.unplug(net.hosts[1], 0)
                    Rendezvous.mark(dir, "cut")
                    val sent = sender.awaitOk(Duration.ofSeconds(240))
                    println("sender:\n${sent.trim()}")
                    sent shouldContain "OK failover-send $count"
                    sent shouldContain "second half over tcp:braid1"
                    val received = receiver.awaitOk(Duration.ofSeconds(240))
                    println("receiver:\n${received.trim()}")
                    received shouldContain "OK received $count"
                    net.plug(net.hosts[1], 0)
                }
            }
    })
