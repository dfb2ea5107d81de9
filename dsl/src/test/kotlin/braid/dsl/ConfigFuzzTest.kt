package braid.dsl

import braid.dsl.TopologyFiles.Format
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import kotlin.random.Random

/**
 * Random and mutated JSON and HOCON files: each is either a valid spec (which then survives a round trip) or a
 * [ConfigFileException] with at least one problem — never another exception.
 */
class ConfigFuzzTest :
    FunSpec({
        val seeds =
            listOf(
                topology { environment = emptyMap() },
                topology {
                    environment = emptyMap()
                    links("shm+tcp:lo|tcp")
                },
                topology {
                    environment = emptyMap()
                    link {
                        name = "fast"
                        shm {
                            eagerSize = 8192
                            ringCapacity = 1 shl 20
                        }
                        rail("nic") {
                            provider = "tcp"
                            domain = "lo"
                            weight = 2.5
                            optional = true
                            injectSize = 512
                        }
                        unexpectedLimit = 4096
                    }
                    progress { idle { maxParkNanos = 300_000 } }
                    jobKey { env = "K" }
                },
            )
        val pieces =
            listOf(
                "{",
                "}",
                "[",
                "]",
                ",",
                ":",
                "=",
                "\"",
                "\n",
                " ",
                "#",
                "//",
                "null",
                "true",
                "-1",
                "1e99",
                "\${?X}",
                "\${X}",
                "links",
                "rails",
                "name",
                "provider",
                "weight",
                "limits",
                "injectSize",
                "\"64 KiB\"",
                "shm+tcp",
                "include \"x\"",
                "\\",
                "\u0000",
                "é",
                "0x10",
            )

        fun mutate(text: String, r: Random): String {
            val sb = StringBuilder(text)
            repeat(1 + r.nextInt(4)) {
                if (sb.isEmpty()) sb.append(pieces.random(r))
                val at = r.nextInt(sb.length + 1)
                when (r.nextInt(6)) {
                    0 -> if (at < sb.length) sb.deleteCharAt(at)
                    1 -> sb.insert(at, pieces.random(r))
                    2 -> sb.setLength(at)
                    3 -> if (at < sb.length) sb.setCharAt(at, (32 + r.nextInt(95)).toChar())
                    4 -> {
                        val end = minOf(sb.length, at + r.nextInt(20))
                        sb.insert(at, sb.substring(at, end))
                    }
                    else -> {
                        val end = minOf(sb.length, at + r.nextInt(40))
                        sb.delete(at, end)
                    }
                }
            }
            return sb.toString()
        }

        fun randomText(r: Random): String = buildString { repeat(r.nextInt(60)) { append(pieces.random(r)) } }

        fun check(text: String, format: Format): Boolean {
            try {
                val spec = TopologyFiles.parse(text, format, "fuzz")
                val again = TopologyFiles.parse(TopologyFiles.encode(spec, format), format, "fuzz")
                check(again == spec) { "round trip changed the spec of:\n$text" }
                return true
            } catch (e: ConfigFileException) {
                check(e.problems.isNotEmpty() && e.message!!.isNotBlank()) {
                    "a file error without problems for:\n$text"
                }
                return false
            } catch (e: Throwable) {
                throw AssertionError(
                    "$format input raised ${e.javaClass.name} instead of ConfigFileException:\n$text",
                    e,
                )
            }
        }

        for (format in Format.values()) {
            test("mutated $format files give a valid spec or a ConfigFileException, nothing else") {
                val seed = System.nanoTime()
                val r = Random(seed)
                val texts = seeds.map { TopologyFiles.encode(it, format) }
                var valid = 0
                repeat(3000) {
                    val text = mutate(texts.random(r), r)
                    try {
                        if (check(text, format)) valid++
                    } catch (e: AssertionError) {
                        throw AssertionError("seed $seed: ${e.message}", e)
                    }
                }
                valid shouldBeGreaterThan 0
            }

            test("random $format text gives a valid spec or a ConfigFileException, nothing else") {
                val seed = System.nanoTime()
                val r = Random(seed)
                repeat(3000) {
                    try {
                        check(randomText(r), format)
                    } catch (e: AssertionError) {
                        throw AssertionError("seed $seed: ${e.message}", e)
                    }
                }
            }
        }
    })
