/// The request ids a catalog has given so far, for its check for repeated ids: the ids' hashes
/// (Swift's own, seeded per process) in one open-addressing array.
///
/// Written by hand because a `Set<String>` takes two likely cache misses per id (its occupancy
/// bitmap and its strings) and a string comparison per probe, for each of a large catalog's ids;
/// here a probe reads one array and compares integers. An id whose hash is already there is only
/// a *possible* repeat, which the caller confirms. The hashes are seeded per process, so a
/// catalog cannot be written to collide (unless `SWIFT_DETERMINISTIC_HASHING` is set).
struct IDSet {
    /// Hashes, 0 for an empty place (a hash of 0 is stored as 1).
    private var hashes: [UInt64]
    private var mask: Int
    private var count = 0

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        hashes = [UInt64](repeating: 0, count: size)
        mask = size - 1
    }

    /// Adds `id`; `false` when an id with its hash was added before (a repeat, or rarely another
    /// id with the same 64-bit hash).
    mutating func insert(_ id: String) -> Bool {
        if (count + 1) * 2 > hashes.count { grow() }
        let hash = max(1, UInt64(bitPattern: Int64(id.hashValue)))
        guard place(hash) else { return false }
        count += 1
        return true
    }

    /// Stores `hash` unless it is there; whether it was stored.
    private mutating func place(_ hash: UInt64) -> Bool {
        var position = Int(truncatingIfNeeded: hash) & mask
        while hashes[position] != 0 {
            if hashes[position] == hash { return false }
            position = (position + 1) & mask
        }
        hashes[position] = hash
        return true
    }

    private mutating func grow() {
        let old = hashes
        hashes = [UInt64](repeating: 0, count: old.count * 2)
        mask = hashes.count - 1
        for hash in old where hash != 0 { _ = place(hash) }
    }
}
