package braid.provider.ofi

import braid.provider.ofi.OfiOps.getInt
import braid.provider.ofi.OfiOps.getLong
import braid.provider.ofi.OfiOps.putInt
import braid.provider.ofi.OfiOps.putLong
import braid.provider.ofi.OfiOps.string

/**
 * The layout of `struct fi_info` and the attribute structs it points to, as libfabric 1.17 lays them out on LP64 for
 * the API version Braid asks for ([OfiLibrary.API_VERSION]). Braid never allocates these structs: libfabric does
 * (`fi_dupinfo`, `fi_getinfo`), so a newer library that appends fields breaks nothing; Braid reads and writes only the
 * offsets below. From 1.17 to 2.x the structs only grew at their ends.
 *
 * ```
 *  struct fi_info (120 bytes)
 *  0      8      16     24           32           40            48         56          64      72        80
 *  +------+------+------+------------+------------+-------------+----------+-----------+-------+---------+---------+
 *  | next | caps | mode | addr_format| src_addrlen| dest_addrlen| src_addr | dest_addr | handle| tx_attr | rx_attr |
 *  +------+------+------+------------+------------+-------------+----------+-----------+-------+---------+---------+
 *  88        96            104           112
 *  +---------+-------------+-------------+-----+
 *  | ep_attr | domain_attr | fabric_attr | nic |
 *  +---------+-------------+-------------+-----+
 * ```
 */
internal object OfiInfoDescriptor {
    /** The offsets of one API version; only 1.17's are known, and later ones keep them. */
    fun forApi(version: Int): OfiInfoDescriptor {
        require(version >= OfiLibrary.API_VERSION) {
            "ofi: no fi_info layout for API ${OfiLibrary.versionString(version)}"
        }
        return this
    }

    // fi_info
    const val NEXT = 0
    const val CAPS = 8
    const val MODE = 16
    const val ADDR_FORMAT = 24
    const val TX_ATTR = 72
    const val RX_ATTR = 80
    const val EP_ATTR = 88
    const val DOMAIN_ATTR = 96
    const val FABRIC_ATTR = 104

    // fi_tx_attr
    const val TX_CAPS = 0
    const val TX_MODE = 8
    const val TX_OP_FLAGS = 16
    const val TX_MSG_ORDER = 24
    const val TX_INJECT_SIZE = 40
    const val TX_SIZE = 48

    // fi_rx_attr
    const val RX_MSG_ORDER = 24
    const val RX_SIZE = 48

    // fi_ep_attr
    const val EP_TYPE = 0
    const val EP_PROTOCOL = 4
    const val EP_PROTOCOL_VERSION = 8
    const val EP_MAX_MSG_SIZE = 16
    const val EP_MEM_TAG_FORMAT = 56

    // fi_domain_attr
    const val DOM_NAME = 8
    const val DOM_THREADING = 16
    const val DOM_CONTROL_PROGRESS = 20
    const val DOM_DATA_PROGRESS = 24
    const val DOM_AV_TYPE = 32
    const val DOM_MR_MODE = 36
    const val DOM_MR_KEY_SIZE = 40
    const val DOM_CQ_DATA_SIZE = 48

    // fi_fabric_attr
    const val FAB_NAME = 8
    const val FAB_PROV_NAME = 16
    const val FAB_PROV_VERSION = 24
    const val FAB_API_VERSION = 28

    // ## Constants of the 1.17 API ##
    const val FI_EP_RDM = 3
    const val FI_AV_TABLE = 2
    const val FI_PROGRESS_MANUAL = 2
    const val FI_MR_VIRT_ADDR = 1 shl 4
    const val FI_MR_ALLOCATED = 1 shl 5
    const val FI_MR_PROV_KEY = 1 shl 6
    const val FI_MR_LOCAL = 1 shl 2
    const val FI_CONTEXT = 1L shl 59
    const val FI_CONTEXT2 = 1L shl 52
    const val FI_ORDER_SAS = 1L shl 8

    /** One native entry, read once into Java values (the native struct is freed with its list). */
    data class Entry(
        val provName: String,
        val fabricName: String,
        val domainName: String,
        val caps: Long,
        val mode: Long,
        val addrFormat: Int,
        val epType: Int,
        val protocol: Int,
        val protocolVersion: Int,
        val maxMsgSize: Long,
        val injectSize: Long,
        val txSize: Long,
        val rxSize: Long,
        val msgOrder: Long,
        val mrMode: Int,
        val mrKeySize: Long,
        val cqDataSize: Long,
        val threading: Int,
        val dataProgress: Int,
        val provVersion: Int,
        /** `fi_tostr(info, FI_TYPE_INFO)`: the text `fi_info -v` prints for it. */
        val verbose: String,
    ) {
        /** The native provider's core name: `tcp` of `tcp;ofi_rxm`. */
        val core: String
            get() = provName.substringBefore(';')
    }

    fun read(info: Long): Entry {
        val tx = getLong(info + TX_ATTR)
        val rx = getLong(info + RX_ATTR)
        val ep = getLong(info + EP_ATTR)
        val dom = getLong(info + DOMAIN_ATTR)
        val fab = getLong(info + FABRIC_ATTR)
        return Entry(
            provName = string(getLong(fab + FAB_PROV_NAME)) ?: "?",
            fabricName = string(getLong(fab + FAB_NAME)) ?: "?",
            domainName = string(getLong(dom + DOM_NAME)) ?: "?",
            caps = getLong(info + CAPS),
            mode = getLong(info + MODE),
            addrFormat = getInt(info + ADDR_FORMAT),
            epType = getInt(ep + EP_TYPE),
            protocol = getInt(ep + EP_PROTOCOL),
            protocolVersion = getInt(ep + EP_PROTOCOL_VERSION),
            maxMsgSize = getLong(ep + EP_MAX_MSG_SIZE),
            injectSize = getLong(tx + TX_INJECT_SIZE),
            txSize = getLong(tx + TX_SIZE),
            rxSize = getLong(rx + RX_SIZE),
            msgOrder = getLong(tx + TX_MSG_ORDER),
            mrMode = getInt(dom + DOM_MR_MODE),
            mrKeySize = getLong(dom + DOM_MR_KEY_SIZE),
            cqDataSize = getLong(dom + DOM_CQ_DATA_SIZE),
            threading = getInt(dom + DOM_THREADING),
            dataProgress = getInt(dom + DOM_DATA_PROGRESS),
            provVersion = getInt(fab + FAB_PROV_VERSION),
            verbose = OfiLibrary.Fi.fi_tostr(info, OfiLibrary.FI_TYPE_INFO) ?: "",
        )
    }

    /**
     * Fills the hints libfabric allocated ([hints], from `fi_dupinfo(NULL)`): an RDM endpoint with [caps], the mode
     * bits Braid honours (it gives every operation a `fi_context2`), the memory-registration modes it handles, and the
     * provider and domain to filter on. Strings are `strdup`-ed, since `fi_freeinfo` frees them.
     */
    fun fillHints(hints: Long, caps: Long, provName: String?, domainName: String?) {
        putLong(hints + CAPS, caps)
        // Braid keeps each sender's order across its rails: only providers that keep send-after-send order serve.
        putLong(getLong(hints + TX_ATTR) + TX_MSG_ORDER, FI_ORDER_SAS)
        putLong(getLong(hints + RX_ATTR) + RX_MSG_ORDER, FI_ORDER_SAS)
        putLong(hints + MODE, FI_CONTEXT or FI_CONTEXT2)
        putInt(getLong(hints + EP_ATTR) + EP_TYPE, FI_EP_RDM)
        val dom = getLong(hints + DOMAIN_ATTR)
        putInt(dom + DOM_MR_MODE, FI_MR_VIRT_ADDR or FI_MR_ALLOCATED or FI_MR_PROV_KEY)
        putInt(dom + DOM_AV_TYPE, FI_AV_TABLE)
        if (domainName != null) putLong(dom + DOM_NAME, OfiLibrary.Libc.strdup(domainName))
        if (provName != null) putLong(getLong(hints + FABRIC_ATTR) + FAB_PROV_NAME, OfiLibrary.Libc.strdup(provName))
    }

    /** The entries of the list at [head], in order. */
    fun forEach(head: Long, each: (Long) -> Unit) {
        var p = head
        while (p != 0L) {
            each(p)
            p = getLong(p + NEXT)
        }
    }
}
