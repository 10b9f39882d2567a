/// A multi-level grid over fence bounding boxes, with insert and remove in place.
///
/// Level `l` has square cells of `baseCellDegrees · 2^l`; a box goes to the finest level whose
/// cells are at least as large as the box, so it touches at most 2 × 2 cells there. A point query
/// looks up one cell per occupied level. Boxes that cross ±180° are stored as their two halves.
/// Chosen over a packed R-tree because requests come and go mid-stream (control records) and a
/// grid takes both without rebuilding; the payload of each cell is a flat array of slots.
struct SpatialIndex {
    static let levelCount = 21
    static let baseCellDegrees = 360.0 / Double(1 << 20)

    /// A slot with its box inline, so a query rejects neighbours without touching the fence.
    private struct Member {
        var slot: Int32
        var box: GeoBounds
    }

    private var cells: [Int64: [Member]] = [:]
    /// For each slot: the cell keys it occupies (empty when absent).
    private var placements: [[Int64]] = []
    /// For each level, its slots and each slot's bounds, for box queries wider than the level's cells.
    private var levelSlots: [[Int32]] = Array(repeating: [], count: levelCount)
    private var slotLevel: [Int8] = []
    private var slotBounds: [[GeoBounds]] = []
    private var occupiedLevels: UInt32 = 0

    /// How many slots are in the index.
    private(set) var count = 0

    private static func cellSize(level: Int) -> Double { baseCellDegrees * Double(1 << level) }

    private static func key(level: Int, column: Int, row: Int) -> Int64 {
        Int64(level) << 56 | Int64(row) << 28 | Int64(column)
    }

    private static func column(_ longitude: Double, size: Double) -> Int {
        max(0, Int(((longitude + 180) / size).rounded(.down)))
    }

    private static func row(_ latitude: Double, size: Double) -> Int {
        max(0, Int(((latitude + 90) / size).rounded(.down)))
    }

    /// Adds `slot` with `bounds` (unwrapped degrees).
    mutating func insert(slot: Int32, bounds: GeoBounds) {
        let index = Int(slot)
        if placements.count <= index {
            placements.append(contentsOf: repeatElement([], count: index + 1 - placements.count))
            slotLevel.append(contentsOf: repeatElement(-1, count: index + 1 - slotLevel.count))
            slotBounds.append(contentsOf: repeatElement([], count: index + 1 - slotBounds.count))
        }
        precondition(placements[index].isEmpty, "slot \(slot) is already indexed")
        let parts = bounds.normalizedParts
        let extent = max(parts.map { $0.east - $0.west }.max() ?? 0, bounds.north - bounds.south)
        var level = 0
        while level < Self.levelCount - 1 && Self.cellSize(level: level) < extent { level += 1 }
        let size = Self.cellSize(level: level)
        var keys: [Int64] = []
        for part in parts {
            for row in Self.row(part.south, size: size)...Self.row(part.north, size: size) {
                for column in Self.column(part.west, size: size)...Self.column(part.east, size: size) {
                    let key = Self.key(level: level, column: column, row: row)
                    keys.append(key)
                    cells[key, default: []].append(Member(slot: slot, box: part))
                }
            }
        }
        placements[index] = keys
        slotLevel[index] = Int8(level)
        slotBounds[index] = parts
        levelSlots[level].append(slot)
        occupiedLevels |= 1 << UInt32(level)
        count += 1
    }

    /// Removes `slot`; nothing happens when it is absent.
    mutating func remove(slot: Int32) {
        let index = Int(slot)
        guard index < placements.count, !placements[index].isEmpty else { return }
        for key in placements[index] {
            guard var members = cells[key] else { continue }
            members.removeAll { $0.slot == slot }
            cells[key] = members.isEmpty ? nil : members
        }
        let level = Int(slotLevel[index])
        if let position = levelSlots[level].firstIndex(of: slot) { levelSlots[level].remove(at: position) }
        if levelSlots[level].isEmpty { occupiedLevels &= ~(1 << UInt32(level)) }
        placements[index] = []
        slotBounds[index] = []
        slotLevel[index] = -1
        count -= 1
    }

    /// Appends the slots whose boxes hold the point. A slot split at ±180° can appear twice when the
    /// point is on the seam, so callers deduplicate.
    func query(latitude: Double, longitude: Double, into result: inout [Int32]) {
        var levels = occupiedLevels
        while levels != 0 {
            let level = levels.trailingZeroBitCount
            levels &= levels - 1
            let size = Self.cellSize(level: level)
            let key = Self.key(
                level: level, column: Self.column(longitude, size: size), row: Self.row(latitude, size: size))
            guard let members = cells[key] else { continue }
            for member in members
            where member.box.south <= latitude && latitude <= member.box.north && member.box.west <= longitude
                && longitude <= member.box.east
            {
                result.append(member.slot)
            }
        }
    }

    /// Appends the slots whose boxes may intersect `bounds` (unwrapped degrees); may repeat slots.
    func query(bounds: GeoBounds, into result: inout [Int32]) {
        let parts = bounds.normalizedParts
        var levels = occupiedLevels
        while levels != 0 {
            let level = levels.trailingZeroBitCount
            levels &= levels - 1
            let size = Self.cellSize(level: level)
            var cellCount = 0
            for part in parts {
                let rows = Self.row(part.north, size: size) - Self.row(part.south, size: size) + 1
                let columns = Self.column(part.east, size: size) - Self.column(part.west, size: size) + 1
                cellCount += rows * columns
            }
            if cellCount > levelSlots[level].count {
                // Wider than the level's population: test each of its boxes instead of each cell.
                for slot in levelSlots[level]
                where slotBounds[Int(slot)].contains(where: { box in
                    parts.contains {
                        $0.south <= box.north && box.south <= $0.north && $0.west <= box.east && box.west <= $0.east
                    }
                }) {
                    result.append(slot)
                }
                continue
            }
            for part in parts {
                for row in Self.row(part.south, size: size)...Self.row(part.north, size: size) {
                    for column in Self.column(part.west, size: size)...Self.column(part.east, size: size) {
                        guard let members = cells[Self.key(level: level, column: column, row: row)] else { continue }
                        for member in members
                        where member.box.south <= part.north && part.south <= member.box.north
                            && member.box.west <= part.east && part.west <= member.box.east
                        {
                            result.append(member.slot)
                        }
                    }
                }
            }
        }
    }
}
