/// The live requests' slots by id: an open-addressing table of 8-byte entries, each a 32-bit
/// fingerprint of the id's hash and the slot, the id itself read from the request entry when a
/// fingerprint matches.
///
/// Written by hand because a `Dictionary<String, Int32>` keeps its occupancy bitmap, keys and
/// values in three places, a likely cache miss each per id added, and every request of a catalog
/// is added through it; here an id costs one probe of one array, and the table is a third of the
/// dictionary's size. Hashes are Swift's (seeded per process), so ids cannot be chosen to collide.
struct RequestIDTable {
    /// `fingerprint << 32 | (slot + 1)`; 0 is an empty place.
    private var entries = [UInt64](repeating: 0, count: 16)
    private var mask = 15
    private(set) var count = 0

    private static func fingerprint(_ id: String) -> UInt64 {
        UInt64(bitPattern: Int64(id.hashValue)) >> 32
    }

    @inline(__always)
    private func home(_ entry: UInt64) -> Int { Int(truncatingIfNeeded: entry >> 32) & mask }

    @inline(__always)
    private static func slot(_ entry: UInt64) -> Int32 { Int32(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1 }

    /// Room for `capacity` ids without growing.
    mutating func reserveCapacity(_ capacity: Int) {
        var size = entries.count
        while capacity * 4 > size * 3 { size <<= 1 }
        if size > entries.count { resize(to: size) }
    }

    /// The slot of the live request `id`; `idOf` gives the id of a slot the table holds.
    @inline(__always)
    func slot(of id: String, idOf: (Int32) -> String) -> Int32? {
        let fingerprint = Self.fingerprint(id)
        var position = Int(truncatingIfNeeded: fingerprint) & mask
        while entries[position] != 0 {
            let entry = entries[position]
            if entry >> 32 == fingerprint && idOf(Self.slot(entry)) == id { return Self.slot(entry) }
            position = (position + 1) & mask
        }
        return nil
    }

    /// Maps `id` to `slot` and returns the slot it mapped to before, if any.
    @inline(__always)
    mutating func claim(_ id: String, slot: Int32, idOf: (Int32) -> String) -> Int32? {
        if (count + 1) * 4 > entries.count * 3 { resize(to: entries.count * 2) }
        let fingerprint = Self.fingerprint(id)
        let entry = fingerprint << 32 | UInt64(UInt32(slot) + 1)
        var position = Int(truncatingIfNeeded: fingerprint) & mask
        while entries[position] != 0 {
            let old = entries[position]
            if old >> 32 == fingerprint && idOf(Self.slot(old)) == id {
                entries[position] = entry
                return Self.slot(old)
            }
            position = (position + 1) & mask
        }
        entries[position] = entry
        count += 1
        return nil
    }

    /// Removes `id` if it maps to `slot` (and nothing otherwise).
    mutating func remove(_ id: String, slot: Int32) {
        let fingerprint = Self.fingerprint(id)
        let entry = fingerprint << 32 | UInt64(UInt32(slot) + 1)
        var hole = Int(truncatingIfNeeded: fingerprint) & mask
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

    /// Every live slot, in no particular order.
    var slots: [Int32] {
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
