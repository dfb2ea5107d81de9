package braid.provider.ofi

import com.sun.jna.Memory
import com.sun.jna.Native
import com.sun.jna.Pointer

/**
 * One native function of an ops table, called through libffi directly: the call interface is prepared once
 * (`Native.ffi_prep_cif`, JNA's public entry to libffi), the arguments are written into native slots of this object,
 * and each call is one `Native.ffi_call` — no boxing, no argument array, no per-call conversion. `Function.invokeLong`
 * does all three on every call (its cost is what `OfiCallCostBench` shows as `function`); the hot path (sends,
 * receives, `fi_cq_readfrom`, RMA) goes through this instead.
 *
 * [signature] names the argument types, then the return type: `L` a 64-bit integer or pointer (`size_t`, `fi_addr_t`,
 * `uint64_t`, any pointer), `I` a 32-bit `int` or enum. LP64 little-endian only (x86-64, aarch64), as the rest of the
 * binding.
 *
 * Not thread-safe: an instance's argument slots are shared, so callers hold the domain lock, as for every native call.
 */
internal class OfiCall(val function: Long, signature: String) : AutoCloseable {
    private val count = signature.length - 1
    private val ints = BooleanArray(count) { signature[it] == 'I' }
    private val returnsInt = signature.last() == 'I'
    // values[count], then the void* args[count] pointing at them, then the return slot, then the arg types.
    private val mem = Memory(maxOf(8L, count * 24L + 8))
    private val values = Pointer.nativeValue(mem)
    private val argv = values + count * 8L
    private val result = argv + count * 8L
    private val types = result + 8
    private var cif = 0L

    init {
        require(function != 0L) { "OfiCall: a null function" }
        require(signature.all { it == 'L' || it == 'I' } && count >= 0) { "OfiCall: bad signature '$signature'" }
        for (i in 0 until count) {
            OfiOps.putLong(argv + 8L * i, values + 8L * i)
            OfiOps.putLong(types + 8L * i, if (ints[i]) SINT32 else SINT64)
        }
        cif = Native.ffi_prep_cif(0, count, if (returnsInt) SINT32 else SINT64, types)
        check(cif != 0L) { "OfiCall: libffi refused the call interface '$signature'" }
    }

    /** Sets argument [i] to [v] (an `I` argument takes the low 32 bits). */
    fun arg(i: Int, v: Long): OfiCall {
        if (ints[i]) OfiOps.putInt(values + 8L * i, v.toInt()) else OfiOps.putLong(values + 8L * i, v)
        return this
    }

    /** Calls the function with the arguments set; its return value (an `I` return sign-extended). */
    fun call(): Long {
        Native.ffi_call(cif, function, result, argv)
        return if (returnsInt) OfiOps.getInt(result).toLong() else OfiOps.getLong(result)
    }

    override fun close() {
        val c = cif
        cif = 0
        if (c != 0L) Native.free(c)
    }

    companion object {
        /**
         * libffi's `ffi_type` for `sint64` and `sint32`, laid out here: `{ size_t size; u16 alignment; u16 type;
         * elements }`.
         */
        private val typeMem = Memory(48).also { it.clear() }
        private val SINT64 = Pointer.nativeValue(typeMem)
        private val SINT32 = SINT64 + 24
        private const val FFI_TYPE_SINT32 = 10
        private const val FFI_TYPE_SINT64 = 12

        init {
            typeMem.setLong(0, 8)
            typeMem.setShort(8, 8)
            typeMem.setShort(10, FFI_TYPE_SINT64.toShort())
            typeMem.setLong(24, 4)
            typeMem.setShort(32, 4)
            typeMem.setShort(34, FFI_TYPE_SINT32.toShort())
        }

        /** The function in slot [offset] of the table [tableAt] bytes into [obj] ([OfiOps.op]), or null. */
        fun of(obj: Long, tableAt: Int, offset: Int, signature: String): OfiCall? {
            val fp = OfiOps.op(obj, tableAt, offset)
            return if (fp == 0L) null else OfiCall(fp, signature)
        }
    }
}
