package braid.core

/**
 * The parameters a module above rail-core declares (collectives, `braid.mpi`, the bootstrap, the `braid` command),
 * registered with the one registry that [Braid.parameters] reads, so that `braid info -e` and `-v` list every `BRAID_*`
 * variable whichever module reads it.
 *
 * Rail-core's own parameters are [CoreParams] and the providers' (`ShmParams`, `TcpParams`, …); a module's are found
 * with [java.util.ServiceLoader]: the module names its implementation in `META-INF/services/braid.core.ModuleParams`.
 * The usual shape is a class whose companion holds the `@JvmField` parameters, so one name is both the declaration and
 * the service:
 * ```
 * public class MpiParams : ModuleParams {
 *     override fun parameters(): List<Param<*>> = ALL
 *     public companion object {
 *         @JvmField public val PROVIDER: Param<String> = Param.string("mpi", "provider", "BRAID_MPI_PROVIDER", "auto", "…")
 *         @JvmField public val ALL: List<Param<*>> = listOf(PROVIDER)
 *     }
 * }
 * ```
 *
 * Values are read only through [Settings] (`settings[MpiParams.PROVIDER]`), never from the environment directly, so a
 * bad value is refused naming the variable, the value and the rule, and callers (tests among them) can pass values
 * through the API instead of the environment. A family of variables (`BRAID_COLL_<OP>`, one per operation) is a
 * parameter per member, built from the enumeration that names the members.
 */
public interface ModuleParams {
    /** This module's parameters, each declared once; their [Param.key]s and [Param.env]s are unique in the registry. */
    public fun parameters(): List<Param<*>>
}
