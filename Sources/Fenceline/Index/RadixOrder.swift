/// The order that sorts `keys` ascending, equal keys in their given order: an LSD radix sort of
/// positions, 11 bits a pass, skipping the passes whose digit is the same for every key.
///
/// Written by hand because the index rebuild sorts a million cell entries or more: sorting 4-byte
/// positions in a few linear passes and gathering the entries once moves far less memory than
/// the standard library's comparison sort of the 32-byte entries themselves.
func radixOrder(of keys: [UInt64]) -> [Int32] {
    let count = keys.count
    guard count > 1 else { return Array(0..<Int32(count)) }
    let digitBits = 11
    let buckets = 1 << digitBits
    var order = [Int32](unsafeUninitializedCapacity: count) { buffer, initialized in
        for position in 0..<count { buffer[position] = Int32(position) }
        initialized = count
    }
    var spare = [Int32](repeating: 0, count: count)
    var histogram = [Int](repeating: 0, count: buckets)
    let spread = keys.reduce(0) { $0 | ($1 ^ keys[0]) }
    var shift = 0
    while shift < 64 && spread >> UInt64(shift) != 0 {
        defer { shift += digitBits }
        // A digit every key shares moves nothing.
        guard (spread >> UInt64(shift)) & UInt64(buckets - 1) != 0 else { continue }
        keys.withUnsafeBufferPointer { keys in
            histogram.withUnsafeMutableBufferPointer { histogram in
                for index in histogram.indices { histogram[index] = 0 }
                for key in keys { histogram[Int((key >> UInt64(shift)) & UInt64(buckets - 1))] += 1 }
                var total = 0
                for index in histogram.indices {
                    let size = histogram[index]
                    histogram[index] = total
                    total += size
                }
                order.withUnsafeBufferPointer { from in
                    spare.withUnsafeMutableBufferPointer { to in
                        for position in from {
                            let digit = Int((keys[Int(position)] >> UInt64(shift)) & UInt64(buckets - 1))
                            to[histogram[digit]] = position
                            histogram[digit] += 1
                        }
                    }
                }
            }
        }
        swap(&order, &spare)
    }
    return order
}
