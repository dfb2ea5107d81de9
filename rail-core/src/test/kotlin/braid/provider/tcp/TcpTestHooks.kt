package braid.provider.tcp

import braid.core.Endpoint

/** The tcp transport behind an endpoint, for tests that look inside. */
internal val Endpoint.tcp: TcpTransport
    get() = transport as TcpTransport
