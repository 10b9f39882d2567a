import Foundation

/// A fast, unseeded hash of a device name, the same on every run: the engine's device table is
/// indexed by its low bits, and `--threads` picks a device's shard from its high bits.
public enum DeviceHash {
    /// Eight bytes per step over the name's contiguous UTF-8 (a short name is spilled to the
    /// stack for it), then a full 64-bit finaliser (MurmurHash3's), so that low and high bits both
    /// depend on every byte. Walking the `utf8` view byte by byte cost more than the rest of a
    /// device lookup; the names are the caller's own input, so a keyed hash is not needed
    /// (collisions only cost probes).
    @inlinable
    public static func of(_ name: String) -> Int {
        var name = name
        return name.withUTF8 { of(bytes: $0) }
    }

    /// The hash of a name given as its UTF-8 bytes; the same as ``of(_:)`` of that name.
    @inlinable
    public static func of(bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(bytes.count)
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            var offset = 0
            while offset + 8 <= bytes.count {
                hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
                hash ^= hash >> 29
                offset += 8
            }
            while offset < bytes.count {
                hash = (hash ^ UInt64(base[offset])) &* 0x100_0000_01B3
                offset += 1
            }
        }
        hash = (hash ^ (hash >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        hash = (hash ^ (hash >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        return Int(truncatingIfNeeded: hash ^ (hash >> 33))
    }
}

/// How device names compare: by their bytes (UTF-8), for identity as for order. Swift's `==` and
/// `<` compare text, equating canonically equivalent spellings (a precomposed "é" and "e" with a
/// combining accent), which hash apart: two such names were one device or two depending on
/// whether their probes met, and events of both at one instant came out in an order that depended
/// on the number of threads.
package enum DeviceNames {
    /// Whether `a` is the name whose UTF-8 bytes are `b`.
    @inline(__always)
    package static func areSame(_ a: String, bytes b: UnsafeBufferPointer<UInt8>) -> Bool {
        let same = a.utf8.withContiguousStorageIfAvailable { a in
            a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
        }
        return same ?? a.utf8.elementsEqual(b)
    }

    /// Whether two names are one device: exactly when their bytes are the same.
    @inline(__always)
    package static func areSame(_ a: String, _ b: String) -> Bool {
        // The usual hit first: one short name held inline (or one storage) has the same two
        // words (the standard library's `==` takes the same shortcut); comparing the bytes every
        // time made an empty-catalog run a third slower.
        if unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self) {
            return true
        }
        guard a.utf8.count == b.utf8.count else { return false }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// SPEC §4's order of devices: by their bytes, which is Unicode code point order; no device
    /// (`nil`) sorts as the empty name.
    package static func precedes(_ a: String?, _ b: String?) -> Bool {
        (a ?? "").utf8.lexicographicallyPrecedes((b ?? "").utf8)
    }
}

/// A device name as a key that is the same exactly when the bytes are (see ``DeviceNames``):
/// `String`'s own equality merges canonically equivalent names the engine keeps apart.
struct DeviceName: Hashable {
    let name: String

    static func == (a: DeviceName, b: DeviceName) -> Bool { DeviceNames.areSame(a.name, b.name) }

    func hash(into hasher: inout Hasher) { hasher.combine(DeviceHash.of(name)) }
}
