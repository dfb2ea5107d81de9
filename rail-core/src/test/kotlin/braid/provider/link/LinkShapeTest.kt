package braid.provider.link

import braid.core.Braid
import braid.core.FabricException
import braid.core.Hints
import braid.provider.link.LinkShapeProblem.Kind
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

/**
 * The link-shape rules, declared once: each broken rule at its path relative to the link, and the link provider
 * refusing with the same words.
 */
class LinkShapeTest :
    FunSpec({
        fun rail(spec: String): LinkShape.Rail {
            val provider = spec.substringBefore(':')
            return LinkShape.Rail(spec, provider, if (':' in spec) listOf(spec.substringAfter(':')) else emptyList())
        }

        fun problems(vararg rails: String) = LinkShape.problems(rails.map(::rail))

        test("a sound link breaks no rule, and shm goes first") {
            problems("shm", "tcp:lo").shouldBeEmpty()
            problems("tcp").shouldBeEmpty()
            problems("shm:shm").shouldBeEmpty()
            LinkShape.ordered(listOf("tcp", "shm")) { it }.shouldBe(listOf("shm", "tcp"))
        }

        data class Case(val rails: List<String>, val kind: Kind, val path: String, val words: String)

        for (c in
            listOf(
                Case(emptyList(), Kind.NO_RAIL, "rails", "has no rail"),
                Case(
                    listOf("shm", "link"),
                    Kind.LINK_AS_RAIL,
                    "rails[1].provider",
                    "provider 'link' cannot be a rail of a link",
                ),
                Case(
                    listOf("shm", "verbs"),
                    Kind.UNKNOWN_PROVIDER,
                    "rails[1].provider",
                    "unknown rail provider 'verbs' (known: shm, tcp)",
                ),
                Case(
                    listOf("shm:eth0", "tcp"),
                    Kind.SHM_DOMAIN,
                    "rails[0].domain",
                    "shm has one domain, 'shm', not 'eth0'",
                ),
                Case(
                    listOf("shm", "tcp", "shm"),
                    Kind.SHM_TWICE,
                    "rails[2]",
                    "has 2 shm rails ('shm', 'shm'): shm appears twice",
                ),
                Case(
                    listOf("shm", "tcp:a", "tcp:b"),
                    Kind.NETWORK_RAILS,
                    "rails",
                    "has 2 inter-node rails ('tcp:a', 'tcp:b') but policy LOCALITY",
                ),
            )) {
            test("rule ${c.kind}: ${c.rails.joinToString("+").ifEmpty { "no rails" }} is refused at ${c.path}") {
                val p = problems(*c.rails.toTypedArray()).single()
                p.kind shouldBe c.kind
                p.path shouldBe c.path
                p.problem shouldContain c.words
                p.message("x", c.rails.map(::rail)) shouldContain
                    (if (p.ofLink) "link 'x' ${c.words}" else "in link 'x': ${c.words}")
            }
        }

        test("the link provider refuses a link string with the rule's own words") {
            for (text in listOf("shm+verbs", "shm:eth0", "shm+shm", "shm+tcp+tcp", "shm+link")) {
                val rule =
                    LinkShape.problems(
                            braid.core.LinkSelector.parse(text).single().rails.map {
                                LinkShape.Rail(it.toString(), it.provider, it.domains)
                            }
                        )
                        .first()
                val message =
                    shouldThrow<FabricException> {
                            Braid.getInfo(Hints(provider = "link").with(LinkParams.LINKS, text))
                        }
                        .message!!
                message shouldContain "link '$text': ${rule.problem}; ${rule.hint}"
            }
        }
    })
