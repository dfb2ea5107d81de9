package braid.provider.ofi

import braid.core.Info

/** What `braid info` shows of a native rail's [Info]: its native provider's name and libfabric's own description. */
public object OfiInfos {
    /** Whether [info] is a native rail's (`ofi`). */
    @JvmStatic public fun isNative(info: Info): Boolean = info.provider == OfiProvider.name

    /**
     * Whether [provider] names the native rail explicitly: `ofi` or `ofi:PROV[:DOMAIN]` (a bare native name such as
     * `verbs` is the native rail only where libfabric has it: [braid.core.Braid.hasProvider] answers that).
     */
    @JvmStatic public fun isNativeName(provider: String): Boolean = provider == "ofi" || provider.startsWith("ofi:")

    /** The name a native rail's [info] goes by: `ofi:` and the native provider (`ofi:tcp;ofi_rxm`). */
    @JvmStatic public fun name(info: Info): String = "ofi:" + OfiProvider.nativeName(info)

    /**
     * libfabric's own text for the native entry behind [info] (`fi_tostr(info, FI_TYPE_INFO)`, what `fi_info -v`
     * prints), or null when that entry is gone.
     */
    @JvmStatic
    public fun verbose(info: Info): String? =
        OfiGetInfo.query(OfiProvider.nativeName(info), info.domainName)
            .firstOrNull {
                it.provName == OfiProvider.nativeName(info) &&
                    it.fabricName == info.fabricName &&
                    it.domainName == info.domainName
            }
            ?.verbose
}
