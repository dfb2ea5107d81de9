package braid.bootstrap

import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit

private const val WAITING = "waiting in the lookup"

class AddressBookTest :
    FunSpec({
        val dir = Files.createTempDirectory("braid-addressbook")
        afterSpec { dir.toFile().deleteRecursively() }

        test("a lookup in a directory waits for a name published later and returns its bytes whole") {
            val book = AddressBook.inDirectory(dir.resolve("late"))
            val value = ByteArray(20_000) { (it * 7).toByte() }
            // The lookup runs on a thread of its own, and the name is published only once that thread is
            // seen pausing inside the lookup, having looked once: a lookup that did not wait would fail.
            val lookup = CompletableFuture<ByteArray>()
            val looker =
                Thread(
                        {
                            runCatching { book.lookup("server", Duration.ofSeconds(30)) }
                                .fold({ lookup.complete(it) }, { lookup.completeExceptionally(it) })
                        },
                        "address-book-lookup",
                    )
                    .apply {
                        isDaemon = true
                        start()
                    }
            fun where(): String {
                if (lookup.isDone) return "done: $lookup"
                val stack = looker.stackTrace
                val inLookup = stack.any { it.className.startsWith(AddressBook::class.java.name) }
                val pausing =
                    looker.state == Thread.State.TIMED_WAITING ||
                        looker.state == Thread.State.WAITING ||
                        stack.take(3).any { it.methodName in setOf("sleep", "yield", "onSpinWait", "parkNanos") }
                return if (inLookup && pausing) WAITING else "${looker.state} at ${stack.take(3).joinToString()}"
            }
            val seen =
                Deadline.await(
                    "the lookup of 'server' to be waiting inside AddressBook",
                    Duration.ofSeconds(10),
                    ::where,
                ) {
                    it == WAITING || it.startsWith("done")
                }
            withClue("the lookup before the name was published: $seen") { lookup.isDone shouldBe false }
            AddressBook.inDirectory(dir.resolve("late")).publish("server", value)
            lookup.get(30, TimeUnit.SECONDS).contentEquals(value) shouldBe true
            book.kind shouldBe "directory"
        }

        test("a lookup of a name nobody publishes fails after its timeout, naming the name and the directory") {
            val book = AddressBook.inDirectory(dir.resolve("empty"))
            shouldThrow<BootstrapException> { book.lookup("nobody", Duration.ofMillis(50)) }.message shouldContain
                "nothing was published under 'nobody' in ${dir.resolve("empty")}"
        }

        test("a memory key published as a long is looked up as the same long") {
            val book = AddressBook.inDirectory(dir.resolve("keys"))
            book.publishLong("mr", -0x0123456789abcdefL)
            book.lookupLong("mr", Duration.ofSeconds(1)) shouldBe -0x0123456789abcdefL
        }

        test("publishing a name twice, or a name that is not file-safe, is refused with the reason") {
            val book = AddressBook.inDirectory(dir.resolve("twice"))
            book.publish("a", byteArrayOf(1))
            shouldThrow<BootstrapException> { book.publish("a", byteArrayOf(2)) }.message shouldContain
                "already published"
            shouldThrow<BootstrapException> { book.publish("../x", byteArrayOf(2)) }.message shouldContain "name '../x'"
            book.lookup("a", Duration.ZERO).toList() shouldBe listOf<Byte>(1)
        }
    })
