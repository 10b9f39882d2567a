import TestSupport
import Testing

@testable import Fenceline

@Suite struct DeviceTableTests {
    /// Names are one device exactly when their bytes are: equal text spelled with other bytes is
    /// another device; equal bytes in separate storage (long names) are the same one.
    @Test func namesAreTheSameDeviceByTheirBytes() {
        #expect(!DeviceNames.areSame("caf\u{E9}", "cafe\u{301}"))
        #expect("caf\u{E9}" == "cafe\u{301}")  // as Swift compares text
        #expect(DeviceNames.areSame("truck-17", "truck-" + String(17)))
        let long = String(repeating: "vehicle-", count: 4) + "\u{E9}"
        #expect(DeviceNames.areSame(long, String(decoding: Array(long.utf8), as: UTF8.self)))
        #expect(!DeviceNames.areSame(long, String(repeating: "vehicle-", count: 4) + "e\u{301}"))
        #expect(!DeviceNames.areSame("truck-17", "truck-18"))
        // Ordered by bytes too: the combining spelling ("e" then U+0301) before the precomposed one.
        #expect(DeviceNames.precedes("cafe\u{301}", "caf\u{E9}") && !DeviceNames.precedes("caf\u{E9}", "cafe\u{301}"))
        #expect(DeviceNames.precedes(nil, "a") && !DeviceNames.precedes("a", nil) && !DeviceNames.precedes(nil, ""))
        var table = DeviceTable()
        #expect(table.intern("caf\u{E9}") != table.intern("cafe\u{301}"))
        #expect(table.intern(long) == table.intern(String(decoding: Array(long.utf8), as: UTF8.self)))
    }

    @Test func internGivesEachNameOneDenseIdThroughGrowth() {
        var table = DeviceTable()
        var generator = SplitMix(state: 5)
        var expected: [String: Int32] = [:]
        for _ in 0..<20_000 {
            // Short names collide often in a small table; some repeat.
            let name = "d\(Int.random(in: 0..<12_000, using: &generator))"
            let id = table.intern(name)
            if let known = expected[name] {
                #expect(id == known)
            } else {
                #expect(Int(id) == expected.count)
                expected[name] = id
            }
        }
        for (name, id) in expected { #expect(table.id(of: name) == id) }
        #expect(table.id(of: "never seen") == nil)
        #expect(table.intern("") == Int32(expected.count))
    }

    @Test func namesOfEveryLengthInternApart() {
        // Lengths around the hash's eight-byte steps and the 15-byte limit of inline strings.
        var table = DeviceTable()
        let names = (0..<40).flatMap { length in
            ["x", "é", "y"].map { String(repeating: "a", count: length) + $0 }
        }
        for (index, name) in names.enumerated() { #expect(table.intern(name) == Int32(index)) }
        for (index, name) in names.enumerated() { #expect(table.id(of: name) == Int32(index)) }
    }

    @Test func namesDifferingOnlyInLaterBytesSpreadOverTheTable() {
        // Fleet ids share a prefix; the table indexes by the hash's low bits, so those must depend
        // on every byte, or the probes grow long. The bound is generous for a half-full table;
        // a hash whose low bits miss the digits gave 5,230.
        var table = DeviceTable()
        for number in 0..<4000 { _ = table.intern("dev-" + String(number + 10_000).dropFirst()) }
        for number in 0..<4000 { _ = table.intern("vehicle-\(number)-of-the-northern-fleet") }
        #expect(table.longestProbe < 24)
    }
}
