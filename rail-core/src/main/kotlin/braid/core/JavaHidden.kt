package braid.core

/**
 * The last parameter of every constructor Java callers must not reach (`new Endpoint(domain, info)` compiled before
 * it): Kotlin compiles a constructor that takes an inline value class into a private constructor and a synthetic one,
 * and javac calls neither, while Kotlin code of this module calls the constructor as before, leaving this parameter to
 * its default. Users open these objects through their factories (`Braid.fabric`, `fabric.domain`, `domain.endpoint`,
 * …).
 */
@JvmInline internal value class JavaHidden(private val unused: Int = 0)
