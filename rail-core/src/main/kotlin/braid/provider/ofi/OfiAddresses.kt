package braid.provider.ofi

/**
 * The bridge between Braid's address blobs for the native rail and the raw addresses native libfabric programs exchange
 * (what `fi_getname` returns and `fi_av_insert` takes), so a Braid endpoint and, say, `fi_pingpong` can insert each
 * other.
 */
public object OfiAddresses {
    /** The raw native address inside [blob], an `ofi` endpoint's [braid.core.Endpoint.address]. */
    @JvmStatic public fun nativeAddress(blob: ByteArray): ByteArray = OfiAddressDescriptor.parse(blob).native.copyOf()

    /** The native address format inside [blob] (fi_info's `addr_format`: `FI_SOCKADDR_IN` is 2). */
    @JvmStatic public fun addressFormat(blob: ByteArray): Int = OfiAddressDescriptor.parse(blob).format

    /**
     * A Braid address blob for the raw native address [native] of format [format] of native provider [provider]
     * (`tcp;ofi_rxm`, as [OfiParams.PROVIDER] names it in the endpoint's Info), ready for
     * [braid.core.AddressVector.insert].
     */
    @JvmStatic
    public fun wrap(provider: String, format: Int, native: ByteArray): ByteArray =
        OfiAddressDescriptor.encode(0L, provider.substringBefore(':'), format, native)
}
