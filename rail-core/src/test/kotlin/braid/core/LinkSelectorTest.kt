package braid.core

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/** The link-string grammar: what parses to what, and every syntax error named with its link, problem and hint. */
class LinkSelectorTest :
    FunSpec({
        test("links, rails and domains parse in the order written; blanks around names are ignored") {
            LinkSelector.parse("shm+tcp") shouldBe
                listOf(LinkSelector(listOf(RailSelector("shm"), RailSelector("tcp"))))
            val links = LinkSelector.parse(" tcp : eth0 , lo + shm | tcp:lo ")
            links shouldBe
                listOf(
                    LinkSelector(listOf(RailSelector("tcp", listOf("eth0", "lo")), RailSelector("shm"))),
                    LinkSelector(listOf(RailSelector("tcp", listOf("lo")))),
                )
            links.map { it.toString() } shouldBe listOf("tcp:eth0,lo+shm", "tcp:lo")
            links.map { it.name } shouldBe listOf("tcp+shm", "tcp")
            // The grammar does not limit rails: which may be joined is for whoever opens the link.
            LinkSelector.parse("tcp:eth0+tcp:eth1+verbs").single().rails.map { it.provider } shouldBe
                listOf("tcp", "tcp", "verbs")
        }

        test("expand makes one link per choice of a domain for each rail that names several") {
            LinkSelector.parse("shm+tcp:eth0,lo").single().expand().map { it.toString() } shouldBe
                listOf("shm+tcp:eth0", "shm+tcp:lo")
            LinkSelector.parse("a:1,2+b:x,y").single().expand().map { it.toString() } shouldBe
                listOf("a:1+b:x", "a:1+b:y", "a:2+b:x", "a:2+b:y")
            LinkSelector.parse("shm+tcp").single().expand().map { it.toString() } shouldBe listOf("shm+tcp")
        }

        test("a broken link string throws a LinkStringException naming the source, the link, the problem and a fix") {
            fun refused(text: String): LinkStringException =
                shouldThrow<LinkStringException> { LinkSelector.parse(text, "BRAID_LINKS") }
            refused("shm++tcp").let {
                it.code shouldBe Errno.EINVAL
                it.source shouldBe "BRAID_LINKS"
                it.text shouldBe "shm++tcp"
                it.link shouldBe "shm++tcp"
                it.problem shouldBe "an empty rail between '+'"
                it.message shouldBe
                    "BRAID_LINKS='shm++tcp': link 'shm++tcp': an empty rail between '+'; join rails with single '+', e.g. \"shm+tcp\" [EINVAL]"
            }
            refused("  ").problem shouldBe "is empty"
            refused("shm+tcp||tcp").let {
                it.link shouldBe null
                it.problem shouldBe "an empty link between '|'"
            }
            refused("shm|:lo").let {
                it.link shouldBe ":lo"
                it.problem shouldBe "rail ':lo' has no provider before ':'"
            }
            refused("shm+tcp:").problem shouldBe "rail 'tcp:' has an empty domain name"
            refused("tcp:eth0,,lo").problem shouldBe "rail 'tcp:eth0,,lo' has an empty domain name"
            refused("tcp:a:b").problem shouldBe
                "rail 'tcp:a:b' has a malformed domain: one ':' separates the provider from its domains"
            shouldThrow<FabricException> { LinkSelector.parse("|") }.message shouldBe
                "link string='|': an empty link between '|'; separate links with single '|', e.g. \"shm+tcp|tcp\" [EINVAL]"
        }
    })
