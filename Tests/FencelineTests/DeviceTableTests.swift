import TestSupport
import Testing

@testable import Fenceline

@Suite struct DeviceTableTests {
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
}
