package braid.samples

/**
 * The command line was wrong: an unknown subcommand or option, a missing or malformed value. `braid` prints [message]
 * and the command's usage, and exits with status 2.
 *
 * [command] is the subcommand whose usage applies (`"pingpong"`), or null for `braid` itself.
 */
internal class UsageException(val command: String?, message: String) : RuntimeException(message)

/**
 * The command was well formed but failed while running: the peer died, a connection timed out, a data check found a
 * corrupted byte. `braid` prints [message] and exits with status 1. The message says what happened and, where there is
 * one, what to do about it.
 */
internal class CommandFailure(message: String, cause: Throwable? = null) : RuntimeException(message, cause)
