/// The first device of each occupied cell of a proximity grid, by the cell's 64-bit key (the
/// others follow through the devices' own links): open addressing with linear probing and a
/// multiplicative hash, deleting by backward shift so that cells left empty free their place.
/// Written by hand, on raw storage: Swift's `Dictionary` hashes every key with SipHash, and arrays
/// held by a class are retained at each access; the two took a third of a proximity fix's time.
final class CellTable {
    private static let empty = Int64.min
    private var keys: UnsafeMutablePointer<Int64>
    private var heads: UnsafeMutablePointer<Int32>
    private var capacity = 16
    /// Occupied cells.
    private(set) var count = 0

    init() {
        keys = .allocate(capacity: capacity)
        keys.initialize(repeating: Self.empty, count: capacity)
        heads = .allocate(capacity: capacity)
        heads.initialize(repeating: -1, count: capacity)
    }

    deinit {
        keys.deallocate()
        heads.deallocate()
    }

    /// The slot a key hashes to: the top bits of its product with 2⁶⁴/φ (Fibonacci hashing).
    @inline(__always)
    private func home(_ key: Int64) -> Int {
        let shift = UInt64(64 - capacity.trailingZeroBitCount)
        return Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The place of `key`, or of the empty slot where it would go.
    @inline(__always)
    private func place(of key: Int64) -> Int {
        let mask = capacity - 1
        var index = home(key)
        while keys[index] != key && keys[index] != Self.empty { index = (index + 1) & mask }
        return index
    }

    /// The first device of the cell, -1 when it is empty.
    @inline(__always)
    func head(of key: Int64) -> Int32 {
        let index = place(of: key)
        return keys[index] == key ? heads[index] : -1
    }

    /// Makes `device` the cell's first device; -1 empties the cell.
    func setHead(_ device: Int32, of key: Int64) {
        if device < 0 {
            let index = place(of: key)
            if keys[index] == key { delete(at: index) }
            return
        }
        if (count + 1) * 2 > capacity { grow() }
        let index = place(of: key)
        if keys[index] != key {
            keys[index] = key
            count += 1
        }
        heads[index] = device
    }

    /// Empties the slot and shifts back the entries of its probe run that may move into it.
    private func delete(at start: Int) {
        let mask = capacity - 1
        var hole = start
        var index = start
        keys[hole] = Self.empty
        count -= 1
        while true {
            index = (index + 1) & mask
            guard keys[index] != Self.empty else { return }
            let wanted = home(keys[index])
            // It stays when its home lies cyclically in (hole, index].
            let stays = hole <= index ? (hole < wanted && wanted <= index) : (hole < wanted || wanted <= index)
            if stays { continue }
            keys[hole] = keys[index]
            heads[hole] = heads[index]
            keys[index] = Self.empty
            hole = index
        }
    }

    private func grow() {
        let (oldKeys, oldHeads, oldCapacity) = (keys, heads, capacity)
        capacity *= 2
        keys = .allocate(capacity: capacity)
        keys.initialize(repeating: Self.empty, count: capacity)
        heads = .allocate(capacity: capacity)
        heads.initialize(repeating: -1, count: capacity)
        for index in 0..<oldCapacity where oldKeys[index] != Self.empty {
            let target = place(of: oldKeys[index])
            keys[target] = oldKeys[index]
            heads[target] = oldHeads[index]
        }
        oldKeys.deallocate()
        oldHeads.deallocate()
    }

    /// Every occupied cell's key and first device (for tests).
    var contents: [Int64: Int32] {
        var result: [Int64: Int32] = [:]
        for index in 0..<capacity where keys[index] != Self.empty { result[keys[index]] = heads[index] }
        return result
    }
}

@available(*, unavailable)
extension CellTable: Sendable {}
