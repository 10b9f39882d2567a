/// Ids and the slots they name (a request's slot in the engine, its position in a decoded
/// catalog): an open-addressing table of 8-byte entries, each a 32-bit fingerprint of the id's
/// hash and the slot, the id itself read from the caller's list (`idOf`) when a fingerprint
/// matches.
///
/// Written by hand because a `Dictionary<String, Int32>` keeps its occupancy bitmap, keys and
/// values in three places, a likely cache miss each per id added, and every request of a catalog
/// is added through it; here an id costs one probe of one array, and the table is a third of the
/// dictionary's size. Hashes are Swift's (seeded per process), so ids cannot be chosen to collide
/// (unless `SWIFT_DETERMINISTIC_HASHING` is set).
package struct RequestIDTable {
    /// `fingerprint << 32 | (slot + 1)`; 0 is an empty place.
    private var entries = [UInt64](repeating: 0, count: 16)
    private var mask = 15
    package private(set) var count = 0

    package init() {}

    /// The part of `id`'s hash the table keeps; its low bits pick the place its probe begins.
    package static func fingerprint(_ id: String) -> UInt64 {
        UInt64(bitPattern: Int64(id.hashValue)) >> 32
    }

    /// Asks for the cache line where the probe for `fingerprint` begins, without waiting for
    /// it: a bulk load hashes an id some requests ahead of claiming it, so the claim finds the
    /// line in cache instead of waiting on a miss per id (the table is megabytes, its places
    /// random).
    @inline(__always)
    package func prefetch(fingerprint: UInt64) {
        let position = home(fingerprint << 32)
        entries.withUnsafeBufferPointer { Fenceline.prefetch($0.baseAddress! + position, byteCount: 8) }
    }

    private static func entry(fingerprint: UInt64, slot: Int32) -> UInt64 {
        fingerprint << 32 | UInt64(UInt32(slot) + 1)
    }

    /// Where an entry (or a fingerprint shifted into place) begins its probe.
    @inline(__always)
    private func home(_ entry: UInt64) -> Int { Int(truncatingIfNeeded: entry >> 32) & mask }

    @inline(__always)
    private static func slot(_ entry: UInt64) -> Int32 { Int32(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1 }

    /// Where `id` is, or the empty place that ends its probe.
    @inline(__always)
    private func find(_ id: String, fingerprint: UInt64, idOf: (Int32) -> String) -> (position: Int, found: Bool) {
        var position = home(fingerprint << 32)
        while entries[position] != 0 {
            let entry = entries[position]
            if entry >> 32 == fingerprint && idOf(Self.slot(entry)) == id { return (position, true) }
            position = (position + 1) & mask
        }
        return (position, false)
    }

    /// Room for `capacity` ids without growing.
    package mutating func reserveCapacity(_ capacity: Int) {
        var size = entries.count
        while capacity * 4 > size * 3 { size <<= 1 }
        if size > entries.count { resize(to: size) }
    }

    /// The slot of `id`; `idOf` gives the id of a slot the table holds.
    @inline(__always)
    package func slot(of id: String, idOf: (Int32) -> String) -> Int32? {
        let place = find(id, fingerprint: Self.fingerprint(id), idOf: idOf)
        return place.found ? Self.slot(entries[place.position]) : nil
    }

    /// Maps `id` to `slot` and returns the slot it mapped to before, if any.
    @inline(__always)
    package mutating func claim(_ id: String, slot: Int32, idOf: (Int32) -> String) -> Int32? {
        claim(id, fingerprint: Self.fingerprint(id), slot: slot, idOf: idOf)
    }

    /// ``claim(_:slot:idOf:)`` with `id`'s ``fingerprint(_:)`` already computed (to prefetch).
    @inline(__always)
    package mutating func claim(_ id: String, fingerprint: UInt64, slot: Int32, idOf: (Int32) -> String) -> Int32? {
        if (count + 1) * 4 > entries.count * 3 { resize(to: entries.count * 2) }
        let place = find(id, fingerprint: fingerprint, idOf: idOf)
        let replaced = place.found ? Self.slot(entries[place.position]) : nil
        if !place.found { count += 1 }
        entries[place.position] = Self.entry(fingerprint: fingerprint, slot: slot)
        return replaced
    }

    /// Removes `id` if it maps to `slot` (and nothing otherwise).
    package mutating func remove(_ id: String, slot: Int32) {
        let entry = Self.entry(fingerprint: Self.fingerprint(id), slot: slot)
        var hole = home(entry)
        while entries[hole] != entry {
            guard entries[hole] != 0 else { return }
            hole = (hole + 1) & mask
        }
        // Backward shift: each later entry of the run that may live in the hole (the hole lies on
        // its way from its home place) moves into it, so lookups never meet a gap in their run.
        var next = (hole + 1) & mask
        while entries[next] != 0 {
            let start = home(entries[next])
            if (hole - start) & mask < (next - start) & mask {
                entries[hole] = entries[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        entries[hole] = 0
        count -= 1
    }

    /// Every slot the table holds, in no particular order.
    package var slots: [Int32] {
        entries.compactMap { $0 == 0 ? nil : Self.slot($0) }
    }

    private mutating func resize(to size: Int) {
        let old = entries
        entries = [UInt64](repeating: 0, count: size)
        mask = size - 1
        for entry in old where entry != 0 {
            var position = home(entry)
            while entries[position] != 0 { position = (position + 1) & mask }
            entries[position] = entry
        }
    }
}
