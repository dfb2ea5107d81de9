package braid.core

import io.kotest.core.spec.style.FunSpec

/** RMA and atomics through real shm endpoints: the rail contract ([rmaContract]). */
class RmaTest : FunSpec({ rmaContract { count -> TestFabric(count) } })
