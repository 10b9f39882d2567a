import Foundation
import TestSupport
import Testing

@testable import Fenceline

@Suite struct SpatialIndexTests {
    func box(_ lat: Double, _ lon: Double, _ size: Double) -> GeoBounds {
        GeoBounds(south: lat - size, north: lat + size, west: lon - size, east: lon + size)
    }

    /// The rebuild's hand-written sort against the standard library's, on keys shaped as the
    /// index makes them (a level, then rows and columns) and on arbitrary ones, with many repeats.
    @Test func radixOrderSortsLikeAStableSortByKey() {
        var generator = SplitMix(state: 11)
        let shapes: [(Int, () -> UInt64)] = [
            (0, { 0 }), (1, { 7 }), (5_000, { UInt64.random(in: 0...3, using: &generator) }),
            (
                20_000,
                {
                    UInt64.random(in: 0...20, using: &generator) << 42 | UInt64.random(
                        in: 0..<(1 << 19), using: &generator) << 21
                        | UInt64.random(in: 0..<(1 << 20), using: &generator)
                }
            ),
            (20_000, { UInt64.random(in: 0...UInt64.max, using: &generator) }),
            (20_000, { 1 << 47 | UInt64.random(in: 0...50, using: &generator) << 30 }),
        ]
        for (count, make) in shapes {
            let keys = (0..<count).map { _ in make() }
            let order = radixOrder(of: keys).map(Int.init)
            let expected = keys.indices.sorted { (keys[$0], $0) < (keys[$1], $1) }
            #expect(order == expected, "\(count) keys")
        }
    }

    /// The packed layout the rebuild makes: runs in the order of their cells' keys, each run's
    /// slots ascending, and every entry in exactly one run (query results come in this order).
    @Test func aRebuildPacksRunsByKeyWithSlotsAscending() {
        var generator = SplitMix(state: 5)
        let index = SpatialIndex()
        for slot in 0..<3_000 {
            // Mostly small boxes, so that they are packed in fine cells; every twentieth is large.
            let size = (slot % 20 == 0 ? 0.2 : 0.002) * Double.random(in: 0.5...1, using: &generator)
            index.insert(
                slot: Int32(slot),
                bounds: box(
                    Double.random(in: 50...52, using: &generator), Double.random(in: 4...6, using: &generator), size),
                packingLater: true)
        }
        index.rebuild()
        let cells = index.levels.flatMap(\.cells).filter { $0.key != SpatialIndex.emptyKey }.sorted {
            $0.start < $1.start
        }
        #expect(cells.count > 100)
        #expect(cells.reduce(0) { $0 + Int($1.count) } == index.slots.count)
        var next = 0
        for (position, cell) in cells.enumerated() {
            #expect(Int(cell.start) == next)
            next = Int(cell.start + cell.count)
            if position > 0 { #expect(cells[position - 1].key < cell.key) }
            let run = index.slots[Int(cell.start)..<next]
            #expect(zip(run, run.dropFirst()).allSatisfy { $0 < $1 })
        }
    }

    @Test func pointQueriesFindExactlyTheBoxesHoldingThePoint() {
        var generator = SplitMix(state: 3)
        let index = SpatialIndex()
        var boxes: [GeoBounds] = []
        for slot in 0..<2_000 {
            let size = [0.0005, 0.005, 0.05, 0.5][slot % 4] * Double.random(in: 0.5...1, using: &generator)
            let bounds = box(
                Double.random(in: 50...54, using: &generator), Double.random(in: 3...7, using: &generator), size)
            boxes.append(bounds)
            index.insert(slot: Int32(slot), bounds: bounds)
        }
        // Half packed, half in the overlay; then a third removed (tombstones and overlay removals).
        index.rebuild()
        for slot in 2_000..<3_000 {
            let size = 0.01 * Double.random(in: 0.5...1, using: &generator)
            let bounds = box(
                Double.random(in: 50...54, using: &generator), Double.random(in: 3...7, using: &generator), size)
            boxes.append(bounds)
            index.insert(slot: Int32(slot), bounds: bounds)
        }
        for slot in stride(from: 0, to: 3_000, by: 3) { index.remove(slot: Int32(slot)) }
        for _ in 0..<5_000 {
            let lat = Double.random(in: 50...54, using: &generator), lon = Double.random(in: 3...7, using: &generator)
            var found: [Int32] = []
            index.query(latitude: lat, longitude: lon, into: &found)
            let expected = Set(
                boxes.indices.filter { slot in
                    !slot.isMultiple(of: 3) && boxes[slot].south <= lat && lat <= boxes[slot].north
                        && boxes[slot].west <= lon && lon <= boxes[slot].east
                }.map(Int32.init))
            // Boxes are kept inline (as floats rounded outward): no misses, and a neighbour only
            // within float precision of its box.
            #expect(expected.isSubset(of: Set(found)))
            for slot in Set(found).subtracting(expected) {
                let box = boxes[Int(slot)]
                #expect(!slot.isMultiple(of: 3))
                #expect(
                    lat >= box.south - 1e-4 && lat <= box.north + 1e-4 && lon >= box.west - 1e-4
                        && lon <= box.east + 1e-4)
            }
            #expect(found.count == Set(found).count)
        }
    }

    /// A forked engine's index: the same answers as its source, its query arrays shared until
    /// either side changes them, and changes on either side (a removal empties packed boxes in
    /// place; an insert and rebuild packs anew) not seen by the other.
    @Test func anAdoptedIndexAnswersAsItsSourceAndChangesApart() {
        var generator = SplitMix(state: 5)
        let source = SpatialIndex()
        for slot in 0..<500 {
            source.insert(
                slot: Int32(slot),
                bounds: box(
                    Double.random(in: 50...51, using: &generator), Double.random(in: 4...5, using: &generator), 0.01))
        }
        source.rebuild()
        let copy = SpatialIndex()
        copy.adopt(source)
        func found(_ index: SpatialIndex, _ lat: Double, _ lon: Double) -> Set<Int32> {
            var result: [Int32] = []
            index.query(latitude: lat, longitude: lon, into: &result)
            return Set(result)
        }
        let points = (0..<300).map { _ in
            (Double.random(in: 50...51, using: &generator), Double.random(in: 4...5, using: &generator))
        }
        for (lat, lon) in points { #expect(found(copy, lat, lon) == found(source, lat, lon)) }
        #expect(!source.queryStorage.isEmpty)
        #expect(copy.queryStorage == source.queryStorage)
        // Removed on one side (the packed boxes emptied in place, in a copy of the shared
        // storage), still found on the other; both ways round.
        let hit = points.first { !found(source, $0.0, $0.1).isEmpty }!
        let removed = found(source, hit.0, hit.1).min()!
        copy.remove(slot: removed)
        #expect(!found(copy, hit.0, hit.1).contains(removed))
        #expect(found(source, hit.0, hit.1).contains(removed))
        #expect(Set(copy.queryStorage) != Set(source.queryStorage))
        let other = SpatialIndex()
        other.adopt(source)
        source.remove(slot: removed)
        #expect(!found(source, hit.0, hit.1).contains(removed))
        #expect(found(other, hit.0, hit.1).contains(removed))
        let (lat, lon) = points[0]
        copy.insert(slot: 900, bounds: box(lat, lon, 0.001))
        copy.rebuild()
        #expect(found(copy, lat, lon).contains(900))
        #expect(!found(source, lat, lon).contains(900))
        #expect(!found(other, lat, lon).contains(900))
    }

    /// The clearance is what safe discs stand on: no box the query point is outside may hold a point
    /// closer than it (the boxes holding the point are the caller's candidates already), with boxes
    /// packed, in the overlay, and removed.
    @Test func noOtherBoxBeginsWithinTheClearance() {
        var generator = SplitMix(state: 11)
        let index = SpatialIndex()
        for slot in 0..<3_000 {
            let size = [0.0005, 0.002, 0.004][slot % 3] * Double.random(in: 0.5...1, using: &generator)
            let bounds = box(
                Double.random(in: 52...52.2, using: &generator), Double.random(in: 4.8...5.1, using: &generator), size)
            index.insert(slot: Int32(slot), bounds: bounds)
            if slot == 2_500 { index.rebuild() }
        }
        for slot in stride(from: 0, to: 3_000, by: 7) { index.remove(slot: Int32(slot)) }
        var checked = 0
        for _ in 0..<4_000 {
            let lat = Double.random(in: 52...52.2, using: &generator)
            let lon = Double.random(in: 4.8...5.1, using: &generator)
            var found: [Int32] = []
            var clearance = 1_000.0
            index.query(latitude: lat, longitude: lon, into: &found, clearance: &clearance)
            guard clearance > 0 else { continue }
            checked += 1
            for _ in 0..<4 {
                let bearing = Double.random(in: 0..<(2 * .pi), using: &generator)
                let distance = clearance * Double.random(in: 0.5...0.999, using: &generator)
                let moved = Fixtures.offset(
                    Coordinate(latitude: lat, longitude: lon), east: distance * sin(bearing),
                    north: distance * cos(bearing))
                var near: [Int32] = []
                index.query(latitude: moved.latitude, longitude: moved.longitude, into: &near)
                #expect(Set(near).isSubset(of: found), "\(distance) m of \(clearance) m from \(lat), \(lon)")
            }
        }
        #expect(checked > 3_000)
    }

    @Test func boxesAcrossTheAntimeridianAreFoundOnBothSides() {
        let index = SpatialIndex()
        index.insert(slot: 0, bounds: GeoBounds(south: -1, north: 1, west: 179.5, east: 180.5))
        for lon in [179.7, 180, -180, -179.7] {
            var found: [Int32] = []
            index.query(latitude: 0, longitude: lon, into: &found)
            #expect(found.contains(0), "missing at \(lon)")
        }
        var far: [Int32] = []
        index.query(latitude: 0, longitude: 0, into: &far)
        #expect(far.isEmpty)
        index.remove(slot: 0)
        var none: [Int32] = []
        index.query(latitude: 0, longitude: 180, into: &none)
        #expect(none.isEmpty && index.count == 0)
    }

    @Test func wideBoxQueriesScanLevelsInsteadOfCells() {
        let index = SpatialIndex()
        index.insert(slot: 1, bounds: box(52, 5, 0.0001))
        index.insert(slot: 2, bounds: box(10, 5, 0.0001))
        var found: [Int32] = []
        index.query(bounds: GeoBounds(south: 40, north: 60, west: -10, east: 20), into: &found)
        #expect(found == [1])
    }
}
