import CPrefetch

/// Asks for the cache lines holding `byteCount` bytes at `address` without waiting for them (a
/// software prefetch, which Swift does not expose, hence the one-line C shim): loads of objects
/// scattered in memory then overlap instead of each waiting for the one before.
@inline(__always)
package func prefetch(_ address: UnsafeRawPointer, byteCount: Int) {
    var line = Int(bitPattern: address) & ~63
    let end = Int(bitPattern: address) + byteCount
    while line < end {
        fenceline_prefetch(UnsafeRawPointer(bitPattern: line))
        line += 64
    }
}
