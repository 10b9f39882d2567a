import TestSupport
import Testing

@testable import Fenceline

@Suite struct RequestIDTableTests {
    /// The hand-written id table against a dictionary, over random claims (new ids and
    /// replacements), removals of the current and of a stale slot, and lookups: the same answers
    /// throughout, from a table that grows and has long runs to shift back on removal.
    @Test(arguments: [0, 4_000])
    func answersAsADictionaryDoes(reserved: Int) {
        var generator = SplitMix(state: UInt64(17 + reserved))
        var table = RequestIDTable()
        table.reserveCapacity(reserved)
        var reference: [String: Int32] = [:]
        var idOfSlot: [String] = []  // slot -> id, as the engine's request entries give it
        func id(_ number: Int) -> String { "request-\(number)" }
        for _ in 0..<60_000 {
            let name = id(Int.random(in: 0..<3_000, using: &generator))
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                let slot = Int32(idOfSlot.count)
                idOfSlot.append(name)
                let replaced = table.claim(name, slot: slot) { idOfSlot[Int($0)] }
                #expect(replaced == reference.updateValue(slot, forKey: name))
            case 5..<7:
                guard let current = reference[name] else { continue }
                // A stale slot is left alone; the current one goes.
                table.remove(name, slot: current &+ 1_000_000)
                #expect(table.slot(of: name) { idOfSlot[Int($0)] } == current)
                table.remove(name, slot: current)
                reference[name] = nil
            default:
                #expect(table.slot(of: name) { idOfSlot[Int($0)] } == reference[name])
            }
            #expect(table.count == reference.count)
        }
        #expect(table.slots.sorted() == reference.values.sorted())
        for number in 0..<3_000 {
            #expect(table.slot(of: id(number)) { idOfSlot[Int($0)] } == reference[id(number)])
        }
    }
}
