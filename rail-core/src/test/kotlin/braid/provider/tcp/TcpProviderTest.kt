package braid.provider.tcp

import braid.core.Braid
import braid.core.Caps
import braid.core.FabricException
import braid.core.Hints
import braid.core.Rail
import braid.core.Settings
import braid.core.TestFabric
import braid.provider.shm.ShmAddressDescriptor
import braid.provider.shm.ShmProvider
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.NetworkInterface

/** What the tcp provider offers, and its address blob and settings. */
class TcpProviderTest :
    FunSpec({
        test("getInfo offers one tcp entry per interface that is up, loopback last, after shm in the provider order") {
            Braid.providerNames() shouldBe listOf("shm", "tcp", "link", "ofi")
            // Settings.NONE: the caller's BRAID_TCP_IFACE (or _ADDR) must not choose the interfaces offered.
            val infos = Braid.getInfo(Hints(provider = "tcp", caps = Caps.TAGGED, settings = Settings.NONE))
            val up =
                NetworkInterface.networkInterfaces()
                    .use { s -> s.toList() }
                    .filter { it.isUp && it.interfaceAddresses.isNotEmpty() }
                    .map { it.name }
            infos.map { it.domainName }.toSet() shouldBe up.toSet()
            infos.map { it.domainName } shouldContain "lo"
            if (infos.size > 1) infos.last().domainName shouldBe "lo"
            for (info in infos) {
                info.provider shouldBe "tcp"
                info.caps and
                    (Caps.MSG or
                        Caps.TAGGED or
                        Caps.SEND or
                        Caps.RECV or
                        Caps.SOURCE or
                        Caps.DIRECTED_RECV or
                        Caps.LOCAL_COMM or
                        Caps.REMOTE_COMM) shouldBe
                    (Caps.TAGGED or Caps.SOURCE or Caps.DIRECTED_RECV or Caps.LOCAL_COMM or Caps.REMOTE_COMM)
                info.fabricName shouldContain "/"
            }
            val lo = Braid.getInfo(Hints(provider = "tcp", domainName = "lo", settings = Settings.NONE))
            lo.single().fabricName shouldBe "127.0.0.0/8"
        }

        test("an endpoint on the loopback domain listens on 127.0.0.1 and says so in its address") {
            TestFabric(1, Rail.TCP).use { f ->
                val a = TcpAddressDescriptor.parse(f.nodes[0].ep.address)
                a.socket.address shouldBe InetAddress.getByName("127.0.0.1")
                (a.socket.port > 0) shouldBe true
                a.hostId shouldBe ShmProvider.hostId
                f.nodes[0].av.straddr(f.nodes[0].ep.address) shouldBe
                    "fi_tcp://127.0.0.1:${a.socket.port}/${TcpAddress.idString(a.endpointId)}"
            }
        }

        test("an address blob round-trips, IPv4 and IPv6, and a malformed one is refused naming the field") {
            val v4 = TcpAddressDescriptor.encode(7, 0x1234, InetSocketAddress(InetAddress.getByName("10.1.2.3"), 4242))
            TcpAddressDescriptor.parse(v4).let {
                it.hostId shouldBe 7
                it.endpointId shouldBe 0x1234
                it.socket.port shouldBe 4242
                it.render() shouldBe "fi_tcp://10.1.2.3:4242/1234"
            }
            val v6 = TcpAddressDescriptor.encode(7, 99, InetSocketAddress(InetAddress.getByName("fd00::2"), 5000))
            TcpAddressDescriptor.parse(v6).render() shouldBe "fi_tcp://[fd00:0:0:0:0:0:0:2]:5000/63"
            fun refused(raw: ByteArray) = shouldThrow<FabricException> { TcpAddressDescriptor.parse(raw) }.message!!
            refused(v4.copyOf(10)) shouldContain "too short"
            refused(v4.copyOf().also { it[0] = 0 }) shouldContain "magic"
            refused(ShmAddressDescriptor.encode(1, "braid-1-x")) shouldContain "shm address"
            refused(v4.copyOf().also { it[3] = 9 }) shouldContain "kind 9"
            refused(
                v4.copyOf().also {
                    it[4] = 0
                    it[5] = 0
                }
            ) shouldContain "port 0"
            refused(v4.copyOf().also { it[6] = 5 }) shouldContain "family 5"
            refused(v4.copyOf().also { for (i in 16 until 24) it[i] = 0 }) shouldContain "endpoint id 0"
            refused(v6.copyOf(30)) shouldContain "IPv6"
            refused(
                TcpAddressDescriptor.encode(1, 2, InetSocketAddress(InetAddress.getByName("0.0.0.0"), 1))
            ) shouldContain "wildcard"
            // A newer version may append fields: they are ignored, and the stored blob is what this version knows.
            TcpAddressDescriptor.parse(v4 + byteArrayOf(1, 2, 3)).raw.size shouldBe v4.size
        }

        test("settings come from the environment with defaults, and a bad value is refused naming the variable") {
            fun fromEnvironment(env: Map<String, String>) = TcpSettings.of(Settings.ofEnvironment(env))
            fromEnvironment(emptyMap()) shouldBe TcpSettings("", 5000, 4 shl 20)
            fromEnvironment(
                mapOf("BRAID_JOB_KEY" to "k", "BRAID_TCP_TIMEOUT_MS" to "250", "BRAID_TCP_WINDOW" to "1048576")
            ) shouldBe TcpSettings("k", 250, 1 shl 20)
            shouldThrow<FabricException> { fromEnvironment(mapOf("BRAID_TCP_TIMEOUT_MS" to "soon")) }
                .message!! shouldContain "BRAID_TCP_TIMEOUT_MS='soon'"
            shouldThrow<FabricException> { fromEnvironment(mapOf("BRAID_TCP_WINDOW" to "100")) }.message!! shouldContain
                "BRAID_TCP_WINDOW"
            TcpSettings(jobKey = "secret").toString() shouldContain "<set>"
        }
    })
