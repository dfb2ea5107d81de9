package braid.bootstrap

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit

class AddressBookTest : FunSpec({
    val dir = Files.createTempDirectory("braid-addressbook")
    afterSpec { dir.toFile().deleteRecursively() }

    test("a lookup in a directory waits for a name published later and returns its bytes whole") {
        val book = AddressBook.inDirectory(dir.resolve("late"))
        val value = ByteArray(20_000) { (it * 7).toByte() }
        val lookup = CompletableFuture.supplyAsync { book.lookup("server", Duration.ofSeconds(30)) }
        Thread.sleep(100)
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
        shouldThrow<BootstrapException> { book.publish("a", byteArrayOf(2)) }.message shouldContain "already published"
        shouldThrow<BootstrapException> { book.publish("../x", byteArrayOf(2)) }.message shouldContain "name '../x'"
        book.lookup("a", Duration.ZERO).toList() shouldBe listOf<Byte>(1)
    }
})
