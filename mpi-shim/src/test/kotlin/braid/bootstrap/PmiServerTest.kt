package braid.bootstrap

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.time.Duration
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * `braid run`'s PMI-1 server with real PMI-1 clients over loopback TCP, in one process: the same [Pmi1Bootstrap] the
 * ranks of a job use.
 */
class PmiServerTest :
    FunSpec({
        fun <T> ranks(n: Int, body: (Bootstrap) -> T): List<T> {
            val aborts = ArrayList<Pair<Int, Int>>()
            PmiServer(n, "kvs_test") { r, c -> synchronized(aborts) { aborts += r to c } }
                .use { server ->
                    val pool = Executors.newFixedThreadPool(n)
                    try {
                        val futures =
                            (0 until n).map { r ->
                                pool.submit<T> {
                                    Pmi1Bootstrap(SocketPmiStream(server.port), null, null, r, "braid-run").use(body)
                                }
                            }
                        return futures.map { it.get(60, TimeUnit.SECONDS) }
                    } finally {
                        pool.shutdownNow()
                        pool.awaitTermination(10, TimeUnit.SECONDS) shouldBe true
                    }
                }
        }

        test("three clients learn their ranks and size, put 10 KiB values, fence, and read every rank's back whole") {
            val results =
                ranks(3) { boot ->
                    boot.put("big", RankMain.bigValue(boot.rank))
                    boot.fence()
                    (0 until boot.size).all { r -> boot.get(r, "big").contentEquals(RankMain.bigValue(r)) } to
                        "${boot.rank}/${boot.size}/${boot.kind}"
                }
            results.map { it.first } shouldBe listOf(true, true, true)
            results.map { it.second } shouldBe listOf("0/3/braid-run", "1/3/braid-run", "2/3/braid-run")
        }

        test("a key no rank put is a BootstrapException naming the rank and key") {
            val messages =
                ranks(2) { boot ->
                    boot.fence()
                    shouldThrow<BootstrapException> { boot.get(1 - boot.rank, "nothing") }.message
                }
            messages[0]!! shouldContain "rank 1 put nothing under key 'nothing'"
        }

        test("a value longer than the advertised limit is refused by the server, not truncated") {
            PmiServer(1, "kvs_limit") { _, _ -> }
                .use { server ->
                    val stream = SocketPmiStream(server.port)
                    stream.use {
                        stream.write("cmd=put kvsname=kvs_limit key=k value=${"x".repeat(1024)}\n")
                        PmiLine.parse(stream.readLine()).rc shouldBe -1
                        stream.write("cmd=put kvsname=kvs_limit key=k value=${"x".repeat(1023)}\n")
                        PmiLine.parse(stream.readLine()).rc shouldBe 0
                        stream.write("cmd=get kvsname=kvs_limit key=k\n")
                        PmiLine.parse(stream.readLine())["value"] shouldBe "x".repeat(1023)
                    }
                }
        }

        test("the address book over a job: names published before sync are found by every rank, memory keys as longs") {
            val found =
                ranks(3) { boot ->
                    AddressBook.forJob(boot).use { book ->
                        book.publish("ep.rank${boot.rank}", ByteArray(5000) { (it + boot.rank).toByte() })
                        book.publishLong("key${boot.rank}", 0x1122334455667788L + boot.rank)
                        book.sync()
                        (0 until 3).all { r ->
                            book
                                .lookup("ep.rank$r", Duration.ZERO)
                                .contentEquals(ByteArray(5000) { (it + r).toByte() }) &&
                                book.lookupLong("key$r", Duration.ZERO) == 0x1122334455667788L + r
                        }
                    }
                }
            found shouldBe listOf(true, true, true)
        }
    })
