package braid.bench

import braid.core.Braid
import braid.core.CqFormat
import braid.core.Hints
import braid.core.OpFlags
import braid.provider.ofi.OfiLibrary
import com.sun.jna.Function
import com.sun.jna.NativeLibrary
import java.util.Locale

/**
 * What JNA adds to each native call of the ofi rail, in ns per call, ROUNDS times:
 * - `direct`: `fi_version()` through JNA direct mapping (how the exported functions are bound);
 * - `function`: the same native function through `com.sun.jna.Function.invokeInt` (how the rail's cold ops-table calls
 *   go, and how every one went before [OfiCall]), so `function - direct` is the price of that path;
 * - `ffi`: the same native function through [OfiCall] (libffi with a call interface prepared once and argument slots
 *   reused: how the hot ops-table calls go now, `fi_tsend`, `fi_trecv`, `fi_cq_readfrom`, RMA), and `ffi6`, a
 *   six-argument call the way `fi_send` is made (to `llabs`, whose own work is nil: the arguments are written, not
 *   boxed);
 * - `cq_readfrom PROV`: an empty duty cycle of an open native endpoint (`Domain.progress`, whose native part is one
 *   `fi_cq_readfrom` on an empty CQ plus the provider's own progress), for each native rail named.
 *
 * After the README's build (needs libfabric), every argument optional:
 * ```
 * java -cp samples/target/braid.jar braid.bench.OfiCallCostBench CALLS ROUNDS PROV...
 * ```
 */
public object OfiCallCostBench {
    @JvmStatic
    public fun main(args: Array<String>) {
        val calls = args.getOrNull(0)?.toInt() ?: 2_000_000
        val rounds = args.getOrNull(1)?.toInt() ?: 3
        val provs = args.drop(2).ifEmpty { listOf("ofi:tcp:lo", "ofi:shm") }
        OfiLibrary.require()
        val version =
            Function.getFunction(NativeLibrary.getInstance("libfabric.so.1").getGlobalVariableAddress("fi_version"))
        val noArgs = arrayOf<Any?>()
        val ffi = braid.provider.ofi.OfiCall(com.sun.jna.Pointer.nativeValue(version), "I")
        val ffi6 =
            braid.provider.ofi.OfiCall(
                com.sun.jna.Pointer.nativeValue(NativeLibrary.getInstance("c").getFunction("llabs")),
                "LLLLLLL",
            )
        repeat(rounds) {
            var sink = 0L
            var t = System.nanoTime()
            for (i in 0 until calls) sink += OfiLibrary.Fi.fi_version()
            val direct = (System.nanoTime() - t).toDouble() / calls
            t = System.nanoTime()
            for (i in 0 until calls) sink += version.invokeInt(noArgs)
            val function = (System.nanoTime() - t).toDouble() / calls
            t = System.nanoTime()
            for (i in 0 until calls) sink += ffi.call()
            val viaFfi = (System.nanoTime() - t).toDouble() / calls
            t = System.nanoTime()
            for (i in 0 until calls) {
                val a = i.toLong()
                sink += ffi6.arg(0, -a).arg(1, a).arg(2, a).arg(3, 0).arg(4, a).arg(5, a).call()
            }
            val viaFfi6 = (System.nanoTime() - t).toDouble() / calls
            println(
                String.format(
                    Locale.ROOT,
                    "direct %8.1f ns   function %8.1f ns   ffi %8.1f ns   ffi6 %8.1f ns   (sink %d)",
                    direct,
                    function,
                    viaFfi,
                    viaFfi6,
                    sink and 1,
                )
            )
        }
        for (prov in provs) {
            val info = Braid.getInfo(Hints(provider = prov)).first()
            Braid.fabric(info).use { fabric ->
                val d = fabric.domain(info)
                val cq = d.completionQueue(CqFormat.TAGGED)
                val ep = d.endpoint()
                ep.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                ep.bind(d.addressVector())
                ep.enable()
                repeat(rounds) {
                    val n = calls / 10
                    val t = System.nanoTime()
                    for (i in 0 until n) d.progress()
                    val per = (System.nanoTime() - t).toDouble() / n
                    println(String.format(Locale.ROOT, "cq_readfrom %-12s %8.1f ns per empty duty cycle", prov, per))
                }
            }
        }
    }
}
