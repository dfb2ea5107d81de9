package braid.provider.link

import braid.provider.RailHost

/**
 * The endpoint as one rail of a link sees it: the endpoint itself ([inner]) in everything but whether a peer the rail
 * lost is lost to the endpoint ([lostEverywhere]), which the link answers for its other rails, so that one rail's loss
 * neither fails receives directed at a peer another rail still reaches nor reports that peer down.
 */
internal class LinkRailHost(private val inner: RailHost, private val rail: String) : RailHost by inner {
    /** The link, once its rails are open (until then no rail has lost anything). */
    var link: LinkTransport? = null

    override fun lostEverywhere(addr: Long): Boolean = link?.reachedElsewhere(addr, rail) != true
}
