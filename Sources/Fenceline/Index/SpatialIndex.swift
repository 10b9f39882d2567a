import Foundation

/// A multi-level grid over fence bounding boxes, with insert and remove mid-stream.
///
/// Level `l` has square cells of `baseCellDegrees · 2^l`; a box goes to the finest level whose
/// cells are at least as large as the box, so it touches at most 2 × 2 cells there, and a point
/// query looks at one cell per occupied level. Boxes crossing ±180° are stored as their two halves.
/// Each probe of a level is a likely cache miss, so small boxes are lifted to a floor level (that
/// of the 90th-percentile box, chosen at each rebuild): typical fences then share one or two
/// levels and a query reads one run of a few dozen boxes instead of probing four or five tables.
///
/// The cells live in a packed part, rebuilt in bulk: per level an open-addressing table from cell
/// to a run of flat member columns (slots, and boxes as floats rounded outward), so a query tests
/// eight boxes per SIMD step, touches a few cache lines and no reference counts. Boxes inserted
/// after the last build go to a small overlay; a removed packed box is emptied in place (a
/// tombstone no query can match). When the overlay or the tombstones grow past a
/// fraction of the packed part, the next query rebuilds it. Chosen over a packed R-tree because
/// requests come and go mid-stream and both kinds of change stay cheap here. A class, so a query
/// from the engine does not copy (and retain) its arrays; used by one thread at a time.
final class SpatialIndex {
    static let levelCount = 21
    static let baseCellDegrees = 360.0 / Double(1 << 20)

    /// A slot with its box inline, so a query rejects neighbours without touching the fence: an
    /// overlay entry, and how a packed member is built and read back (it is stored by columns).
    struct Member {
        var slot: Int32
        var south: Float
        var north: Float
        var west: Float
        var east: Float

        init(slot: Int32, box: GeoBounds) {
            self.slot = slot
            // Rounded outward: the float box always contains the exact one.
            south = Float(box.south).nextDown
            north = Float(box.north).nextUp
            west = Float(box.west).nextDown
            east = Float(box.east).nextUp
        }

        init(slot: Int32, south: Float, north: Float, west: Float, east: Float) {
            self.slot = slot
            self.south = south
            self.north = north
            self.west = west
            self.east = east
        }

        @inline(__always)
        func contains(latitude: Float, longitude: Float) -> Bool {
            south <= latitude && latitude <= north && west <= longitude && longitude <= east
        }

        @inline(__always)
        func intersects(_ box: GeoBounds) -> Bool {
            Double(south) <= box.north && box.south <= Double(north) && Double(west) <= box.east
                && box.west <= Double(east)
        }
    }

    /// One level of the packed part: cell key → run of the packed columns (`slots`, `edges`), key
    /// and run side by side so a probe reads one cache line.
    struct Cell {
        var key: Int64
        var start: UInt32
        var count: UInt32
    }

    struct Level {
        var cells: [Cell] = []
        var mask = 0
    }

    /// A level's table as a query reads it (see `tables`).
    struct Table {
        var cells: UnsafePointer<Cell>?
        var mask = 0
    }

    @exclusivity(unchecked) private(set) var levels: [Level] = Array(repeating: Level(), count: levelCount)
    /// The packed members column by column, so a query tests eight boxes per step: their slots,
    /// and their boxes as four runs of `slots.count` floats (south, north, west, east). A removed
    /// member keeps its place with an empty box (see `vacate(slot:)`), which no point is in.
    @exclusivity(unchecked) private(set) var slots: [Int32] = []
    @exclusivity(unchecked) private(set) var edges: [Float] = []
    @exclusivity(unchecked) private(set) var packedLevels: UInt32 = 0
    @exclusivity(unchecked) private(set) var packedCount = 0

    @exclusivity(unchecked) private(set) var overlay: [Int64: [Member]] = [:]
    @exclusivity(unchecked) private(set) var overlayLevels: UInt32 = 0
    @exclusivity(unchecked) private(set) var overlayCount = 0

    /// Per slot: where it is (cell keys) and its level; -1 when absent.
    @exclusivity(unchecked) private(set) var slotLevel: [Int8] = []
    @exclusivity(unchecked) private(set) var slotKeys: [[Int64]] = []
    /// Per slot: its box within ±180°, or the part west of the antimeridian for a box across it,
    /// whose other part is in `wrappedBoxes` (rare), so a slot's box is not an allocation of its
    /// own. Read through ``boxes(of:)``.
    @exclusivity(unchecked) private(set) var slotBoxes: [GeoBounds] = []
    @exclusivity(unchecked) private(set) var wrappedBoxes: [Int32: GeoBounds] = [:]
    @exclusivity(unchecked) private(set) var inPacked: [Bool] = []
    @exclusivity(unchecked) private(set) var tombstones = 0
    /// The level small boxes are lifted to (see the type's notes).
    @exclusivity(unchecked) private(set) var floorLevel = 0
    /// Slots inserted with `packingLater` and not packed yet.
    @exclusivity(unchecked) private(set) var unpacked = 0

    /// How many slots are in the index.
    @exclusivity(unchecked) private(set) var count = 0

    /// The packed part's storage, read by queries without retaining it: each access to an array
    /// stored in a class retains its buffer, an atomic add per probe (contended when forked
    /// engines on two cores share the buffers, as they do until one of them changes the index).
    /// `tables` has one entry per level. Renewed by `renewReaders()` after every change to
    /// `levels`, `slots` or `edges`, which keep the storage alive.
    @exclusivity(unchecked) private(set) var packedSlots = UnsafeBufferPointer<Int32>(start: nil, count: 0)
    @exclusivity(unchecked) private(set) var packedEdges = UnsafeBufferPointer<Float>(start: nil, count: 0)
    let tables = UnsafeMutablePointer<Table>.allocate(capacity: levelCount)

    init() {
        tables.initialize(repeating: Table(), count: Self.levelCount)
        renewReaders()
    }

    deinit {
        tables.deallocate()
    }

    private func renewReaders() {
        packedSlots = slots.withUnsafeBufferPointer { $0 }
        packedEdges = edges.withUnsafeBufferPointer { $0 }
        for level in levels.indices {
            tables[level] = Table(
                cells: levels[level].cells.isEmpty
                    ? nil : levels[level].cells.withUnsafeBufferPointer { $0.baseAddress },
                mask: levels[level].mask)
        }
    }

    /// Becomes a copy of `source`, for an engine forked from another, sharing its storage until
    /// either side changes it (copy on write); queries read it without retaining it, so engines
    /// on other cores share it at no cost.
    func adopt(_ source: SpatialIndex) {
        levels = source.levels
        slots = source.slots
        edges = source.edges
        packedLevels = source.packedLevels
        packedCount = source.packedCount
        overlay = source.overlay
        overlayLevels = source.overlayLevels
        overlayCount = source.overlayCount
        slotLevel = source.slotLevel
        slotKeys = source.slotKeys
        slotBoxes = source.slotBoxes
        wrappedBoxes = source.wrappedBoxes
        inPacked = source.inPacked
        tombstones = source.tombstones
        floorLevel = source.floorLevel
        unpacked = source.unpacked
        count = source.count
        renewReaders()
    }

    /// Where the non-empty arrays a query reads are stored (tests check that an adopted index
    /// shares them until it changes).
    var queryStorage: [UnsafeRawPointer] {
        func start<T>(_ array: [T]) -> UnsafeRawPointer? {
            array.isEmpty ? nil : array.withUnsafeBytes { $0.baseAddress }
        }
        return ([start(slots), start(edges)] + levels.map { start($0.cells) }).compactMap { $0 }
    }

    /// What is wrong with the index's shared storage, empty when nothing: the pointers queries
    /// read (``renewReaders()``) must be the arrays' current storage, no slot may wait for
    /// packing, and `count` must be the slots indexed. Tests call it on forked and adopted
    /// indexes after every kind of change; queries check the same in debug builds.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        func address<T>(_ array: [T]) -> UnsafeRawPointer? {
            array.withUnsafeBytes { $0.baseAddress }
        }
        if UnsafeRawPointer(packedSlots.baseAddress) != address(slots) || packedSlots.count != slots.count {
            problems.append("the packed slots' reader is not the slots' storage")
        }
        if UnsafeRawPointer(packedEdges.baseAddress) != address(edges) || packedEdges.count != edges.count {
            problems.append("the packed edges' reader is not the edges' storage")
        }
        for level in levels.indices {
            let cells = levels[level].cells.isEmpty ? nil : address(levels[level].cells)
            if UnsafeRawPointer(tables[level].cells) != cells || tables[level].mask != levels[level].mask {
                problems.append("level \(level)'s table is not its cells' storage")
            }
        }
        if unpacked != 0 { problems.append("\(unpacked) slots wait for packing") }
        let indexed = slotLevel.reduce(0) { $0 + ($1 >= 0 ? 1 : 0) }
        if indexed != count { problems.append("count is \(count), \(indexed) slots are indexed") }
        return problems
    }

    static let emptyKey = Int64.min

    static func cellSize(level: Int) -> Double { baseCellDegrees * Double(1 << level) }

    /// Level, row and column in 47 bits, ordered by them in that order: rows and columns are
    /// under 2^21 (a level-0 cell is 360° / 2^20 wide), and the rebuild sorts the keys by radix,
    /// a pass per 11 bits.
    @inline(__always)
    static func key(level: Int, column: Int, row: Int) -> Int64 {
        assert(row < 1 << 21 && column < 1 << 21)
        return Int64(level) << 42 | Int64(row) << 21 | Int64(column)
    }

    @inline(__always)
    static func level(of key: Int64) -> Int { Int(key >> 42) }

    @inline(__always)
    static func column(_ longitude: Double, size: Double) -> Int {
        max(0, Int(((longitude + 180) / size).rounded(.down)))
    }

    @inline(__always)
    static func row(_ latitude: Double, size: Double) -> Int {
        max(0, Int(((latitude + 90) / size).rounded(.down)))
    }

    @inline(__always)
    static func hash(_ key: Int64, mask: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> 20) & mask
    }

    /// Adds `slot` with `bounds` (unwrapped degrees); it goes to the overlay until the next rebuild.
    /// With `packingLater` (bulk loading) the slot is only recorded, not put in the overlay: call
    /// ``rebuild()`` before the next query.
    func insert(slot: Int32, bounds: GeoBounds, packingLater: Bool = false) {
        let index = Int(slot)
        if slotLevel.count <= index {
            let grow = index + 1 - slotLevel.count
            slotLevel.append(contentsOf: repeatElement(-1, count: grow))
            slotKeys.append(contentsOf: repeatElement([], count: grow))
            slotBoxes.append(contentsOf: repeatElement(GeoBounds(south: 0, north: 0, west: 0, east: 0), count: grow))
            inPacked.append(contentsOf: repeatElement(false, count: grow))
        }
        precondition(slotLevel[index] < 0, "slot \(slot) is already indexed")
        let split = bounds.normalizedSplit
        slotBoxes[index] = split.first
        if let second = split.second { wrappedBoxes[slot] = second }
        let extent = boxes(of: index).reduce(bounds.north - bounds.south) { max($0, $1.east - $1.west) }
        var natural = 0
        while natural < Self.levelCount - 1 && Self.cellSize(level: natural) < extent { natural += 1 }
        slotLevel[index] = Int8(natural)
        let level = max(natural, floorLevel)
        inPacked[index] = false
        count += 1
        if packingLater {
            unpacked += 1
            return
        }
        let size = Self.cellSize(level: level)
        var keys: [Int64] = []
        for part in boxes(of: index) {
            for row in Self.row(part.south, size: size)...Self.row(part.north, size: size) {
                for column in Self.column(part.west, size: size)...Self.column(part.east, size: size) {
                    let key = Self.key(level: level, column: column, row: row)
                    keys.append(key)
                    overlay[key, default: []].append(Member(slot: slot, box: part))
                }
            }
        }
        slotKeys[index] = keys
        overlayLevels |= 1 << UInt32(level)
        overlayCount += 1
    }

    /// Removes `slot`; nothing happens when it is absent.
    func remove(slot: Int32) {
        let index = Int(slot)
        guard index < slotLevel.count, slotLevel[index] >= 0 else { return }
        if inPacked[index] {
            vacate(slot: slot)
            tombstones += 1
        } else if slotKeys[index].isEmpty {
            unpacked -= 1  // recorded for packing, never packed
        } else {
            for key in slotKeys[index] {
                overlay[key]?.removeAll { $0.slot == slot }
                if overlay[key]?.isEmpty == true { overlay[key] = nil }
            }
            overlayCount -= 1
        }
        slotLevel[index] = -1
        slotKeys[index] = []
        if !wrappedBoxes.isEmpty { wrappedBoxes[slot] = nil }
        inPacked[index] = false
        count -= 1
    }

    /// The box of the slot at `index` (present) as one part, or two across the antimeridian.
    @inline(__always)
    func boxes(of index: Int) -> BoxParts {
        BoxParts(first: slotBoxes[index], second: wrappedBoxes.isEmpty ? nil : wrappedBoxes[Int32(index)])
    }

    /// A slot's one or two boxes, without an array.
    struct BoxParts: Sequence, IteratorProtocol {
        var first: GeoBounds?
        var second: GeoBounds?

        mutating func next() -> GeoBounds? {
            let part = first
            first = second
            second = nil
            return part
        }
    }

    /// Empties the packed boxes of `slot` in place: queries then never see it, with no check per member.
    private func vacate(slot: Int32) {
        let level = max(Int(slotLevel[Int(slot)]), floorLevel)
        let size = Self.cellSize(level: level)
        let count = slots.count
        for part in boxes(of: Int(slot)) {
            for row in Self.row(part.south, size: size)...Self.row(part.north, size: size) {
                for column in Self.column(part.west, size: size)...Self.column(part.east, size: size) {
                    guard let run = packedRun(Self.key(level: level, column: column, row: row), level: level) else {
                        continue
                    }
                    for position in run where slots[position] == slot {
                        slots[position] = -1
                        edges[position] = .infinity
                        edges[count + position] = -.infinity
                        edges[2 * count + position] = .infinity
                        edges[3 * count + position] = -.infinity
                    }
                }
            }
        }
        // Shared with a fork (or forked from), the first change copied the storage.
        renewReaders()
    }

    /// The positions of the packed members of the cell `key` at `level`, if it has any.
    @inline(__always)
    func packedRun(_ key: Int64, level: Int) -> Range<Int>? {
        guard packedLevels & (1 << UInt32(level)) != 0, let cells = tables[level].cells else { return nil }
        let mask = tables[level].mask
        var position = Self.hash(key, mask: mask)
        while cells[position].key != Self.emptyKey {
            if cells[position].key == key {
                let start = Int(cells[position].start)
                return start..<(start + Int(cells[position].count))
            }
            position = (position + 1) & mask
        }
        return nil
    }

    /// Packs every present slot (call after bulk inserts; queries do it when the overlay has grown).
    func rebuild() {
        var histogram = [Int](repeating: 0, count: Self.levelCount)
        for level in slotLevel where level >= 0 { histogram[Int(level)] += 1 }
        floorLevel = 0
        var below = 0
        while floorLevel < Self.levelCount - 1 && below + histogram[floorLevel] < count * 9 / 10 {
            below += histogram[floorLevel]
            floorLevel += 1
        }
        // Counted first, so that a million fences reserve what they take rather than four
        // entries each.
        var entryCount = 0
        for index in slotLevel.indices where slotLevel[index] >= 0 {
            let size = Self.cellSize(level: max(Int(slotLevel[index]), floorLevel))
            for part in boxes(of: index) {
                entryCount +=
                    (Self.row(part.north, size: size) - Self.row(part.south, size: size) + 1)
                    * (Self.column(part.east, size: size) - Self.column(part.west, size: size) + 1)
            }
        }
        // Keys and members side by side, written in place at their counted size, then sorted by
        // key through their positions; entries come in slot order, so equal keys keep their slots
        // ascending.
        var members: [Member] = []
        var sortKeys = [UInt64](unsafeUninitializedCapacity: entryCount) { keys, keyCount in
            members = [Member](unsafeUninitializedCapacity: entryCount) { stored, memberCount in
                var position = 0
                for index in slotLevel.indices where slotLevel[index] >= 0 {
                    let level = max(Int(slotLevel[index]), floorLevel)
                    let size = Self.cellSize(level: level)
                    for part in boxes(of: index) {
                        for row in Self.row(part.south, size: size)...Self.row(part.north, size: size) {
                            for column in Self.column(part.west, size: size)...Self.column(part.east, size: size) {
                                precondition(position < entryCount)
                                keys.initializeElement(
                                    at: position,
                                    to: UInt64(bitPattern: Self.key(level: level, column: column, row: row)))
                                stored.initializeElement(at: position, to: Member(slot: Int32(index), box: part))
                                position += 1
                            }
                        }
                    }
                    inPacked[index] = true
                }
                memberCount = position
            }
            keyCount = members.count
        }
        let order = radixOrder(of: sortKeys)
        let keys = order.map { Int64(bitPattern: sortKeys[Int($0)]) }
        sortKeys = []
        // One gather of the members into the slot and edge columns (each member read once).
        let total = order.count
        slots = [Int32](repeating: 0, count: total)
        edges = [Float](repeating: 0, count: 4 * total)
        slots.withUnsafeMutableBufferPointer { slots in
            edges.withUnsafeMutableBufferPointer { edges in
                for (position, source) in order.enumerated() {
                    let member = members[Int(source)]
                    slots[position] = member.slot
                    edges[position] = member.south
                    edges[total + position] = member.north
                    edges[2 * total + position] = member.west
                    edges[3 * total + position] = member.east
                }
            }
        }
        members = []
        levels = Array(repeating: Level(), count: Self.levelCount)
        packedLevels = 0
        // Distinct cells per level (the keys are sorted, level in the top bits).
        var distinct = [Int](repeating: 0, count: Self.levelCount)
        var previous = Self.emptyKey
        for key in keys where key != previous {
            distinct[Self.level(of: key)] += 1
            previous = key
        }
        for level in distinct.indices where distinct[level] > 0 {
            var capacity = 16
            while capacity < distinct[level] * 2 { capacity <<= 1 }
            levels[level] = Level(
                cells: Array(repeating: Cell(key: Self.emptyKey, start: 0, count: 0), count: capacity),
                mask: capacity - 1)
            packedLevels |= 1 << UInt32(level)
        }
        var start = 0
        while start < keys.count {
            var end = start
            while end < keys.count && keys[end] == keys[start] { end += 1 }
            let key = keys[start]
            let level = Self.level(of: key)
            var position = Self.hash(key, mask: levels[level].mask)
            while levels[level].cells[position].key != Self.emptyKey { position = (position + 1) & levels[level].mask }
            levels[level].cells[position] = Cell(key: key, start: UInt32(start), count: UInt32(end - start))
            start = end
        }
        packedCount = count
        unpacked = 0
        for index in slotKeys.indices where !slotKeys[index].isEmpty { slotKeys[index] = [] }
        overlay = [:]
        overlayLevels = 0
        overlayCount = 0
        tombstones = 0
        renewReaders()
    }

    /// Rebuilds when the overlay or the tombstones have outgrown a fraction of the packed part.
    func compactIfNeeded() {
        if overlayCount > max(256, packedCount / 8) || tombstones > max(256, packedCount / 4) { rebuild() }
    }
}
