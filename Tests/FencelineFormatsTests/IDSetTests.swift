import Testing

@testable import FencelineFormats

@Suite struct IDSetTests {
    /// The hand-written id set against `Set<String>`: the same answer for every insert, from no
    /// reserved capacity (it grows) and from a reserved one.
    @Test(arguments: [0, 50_000])
    func answersAsASetOfStringsDoes(capacity: Int) {
        var ids = IDSet(capacity: capacity)
        var reference: Set<String> = []
        var state: UInt64 = 7
        for _ in 0..<40_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let id = "device-\(state >> 50)"  // about 16,000 distinct, so most come again
            #expect(ids.insert(id) == reference.insert(id).inserted)
        }
    }
}
