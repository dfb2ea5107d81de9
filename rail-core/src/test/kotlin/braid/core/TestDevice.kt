package braid.core

/**
 * The tests' device: [braid.bench.SegmentDevice] (in the main sources, where `HmemBench` uses it too), memory no rail
 * can address, reached only through its counting copy functions.
 */
typealias TestDevice = braid.bench.SegmentDevice
