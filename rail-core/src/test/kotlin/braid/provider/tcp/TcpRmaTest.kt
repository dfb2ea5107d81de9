package braid.provider.tcp

import braid.core.Rail
import braid.core.TestFabric
import braid.core.rmaContract
import io.kotest.core.spec.style.FunSpec

/** RMA and atomics through real tcp endpoints on 127.0.0.1: the rail contract ([braid.core.rmaContract]). */
class TcpRmaTest : FunSpec({ rmaContract { count -> TestFabric(count, Rail.TCP) } })
