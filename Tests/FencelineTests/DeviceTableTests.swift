import TestSupport
import Testing

@testable import Fenceline

@Suite struct DeviceTableTests {
    typealias F = Fixtures

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

    /// A name interned by its bytes is the device interned by its string, at every length around
    /// the hash's steps and the inline limit, non-ASCII included, and the other way round; a new
    /// name by bytes takes the next id.
    @Test func internByBytesIsInternByName() {
        var table = DeviceTable()
        let names = (0..<40).flatMap { length in
            ["x", "caf\u{E9}", "cafe\u{301}"].map { String(repeating: "a", count: length) + $0 }
        }
        func byBytes(_ name: String) -> Int32 { Array(name.utf8).withUnsafeBufferPointer { table.intern(bytes: $0) } }
        for (index, name) in names.enumerated() where index.isMultiple(of: 2) {
            #expect(table.intern(name) == Int32(table.count - 1))
        }
        for (index, name) in names.enumerated() where !index.isMultiple(of: 2) {
            #expect(byBytes(name) == Int32(table.count - 1))
        }
        #expect(table.count == names.count)
        for name in names {
            let id = table.id(of: name)
            #expect(id != nil && byBytes(name) == id && table.intern(name) == id)
        }
        #expect(table.count == names.count)
    }

    /// The run pipeline's call with the device as bytes gives the events of `process(_:)`, also
    /// with a reorder window (where it hands the fix on as a reading) and late fixes.
    @Test func processingByDeviceBytesIsProcessingTheFix() throws {
        for window in [TimeSpan.zero, TimeSpan(seconds: 5)] {
            let configuration = Engine.Configuration(reorderWindow: window)
            let catalog = Catalog(requests: [F.circle("gate"), F.circle("near", radius: 30, hysteresis: .naive)])
            let byFix = try Engine(catalog: catalog, configuration: configuration)
            let byBytes = try Engine(catalog: catalog, configuration: configuration)
            var generator = SplitMix(state: 11)
            var expected: [Event] = []
            var actual: [Event] = []
            for second in 0..<400 {
                let device = ["a", "caf\u{E9}", "cafe\u{301}", "a-long-device-name-17"][second % 4]
                let east = Double(Int.random(in: -150...150, using: &generator))
                // Now and then a fix three seconds late: stale without a window, reordered with one.
                let time = Double(second / 4) - (second % 7 == 0 ? 3 : 0)
                guard case .fix(let fix) = F.fix(device, time, east: east, accuracy: 5) else { return }
                expected += byFix.process(fix)
                actual += Array(device.utf8).withUnsafeBufferPointer {
                    byBytes.process(deviceNamed: $0, time: fix.time, coordinate: fix.coordinate, accuracy: fix.accuracy)
                }
            }
            expected += byFix.finish()
            actual += byBytes.finish()
            #expect(expected.count > 20)
            #expect(actual == expected)
        }
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
