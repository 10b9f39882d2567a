import Foundation

/// One proximity request's devices and pairs (SPEC §12): each device's last accepted fix, held
/// in a grid of cells about `2 × near` across, and the pairs that are not idle (inside, waiting
/// out a delay, or used up by `repeats: false`). A fix finds the devices that may be within
/// `near` by looking up the few cells around it, and its own pairs through its partner list, so
/// no work ever grows with the number of pairs.
///
/// A class: the engine mutates it in place per fix, and a value held in the engine's array would
/// be copied on write.
final class ProximityState {
    /// What the engine knows of one device for this request.
    struct Member {
        /// The last accepted fix (its time moved on by a refresh, SPEC §12 filters); `nan`
        /// latitude before the first.
        var latitude = Double.nan
        var longitude = 0.0
        var time = Timestamp(microseconds: 0)
        /// Its grid cell and its place in the cell's list, when it has a fix.
        var cell: Int64 = 0
        var cellIndex: Int32 = -1
        var role = Role.unknown
        /// The devices this one has a stored pair with.
        var partners: [Int32] = []

        var hasFix: Bool { !latitude.isNaN }
        var coordinate: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
    }

    /// Which of the trigger's lists a device matches (and is in the request's scope for).
    struct Role: OptionSet {
        let rawValue: UInt8
        /// Worked out (the device's name was matched once).
        static let known = Role(rawValue: 1)
        /// Matches `among`: may be a pair's `device`.
        static let among = Role(rawValue: 2)
        /// Matches `to` (or `among` when `to` is absent): may be a pair's `other`.
        static let to = Role(rawValue: 4)
        static let unknown: Role = []

        var pairs: Bool { !isDisjoint(with: [.among, .to]) }

        /// Whether a device of this role and one of `other` may form a pair.
        func pairs(with other: Role) -> Bool {
            (contains(.among) && other.contains(.to)) || (other.contains(.among) && contains(.to))
        }
    }

    /// A pair that is not idle.
    struct Pair {
        var inside = false
        /// The start of a pending enter (outside) or exit (inside) delay.
        var candidateSince: Timestamp?
        /// The live delay timer's token, and the live age-out timer's.
        var token: UInt64 = 0
        var ageToken: UInt64 = 0
        /// The stay's visit number and its enter's `since`.
        var visit: Int32 = 0
        var staySince = Timestamp(microseconds: 0)
        /// `repeats: false` and notified: nothing more for this pair.
        var isDone = false
        /// The distance at the pair's last evaluation, in metres.
        var distance = 0.0

        var isIdle: Bool { !inside && candidateSince == nil && !isDone }
    }

    let trigger: ProximityTrigger
    let filters: PositionFilters
    var members: [Member] = []
    /// Device ids by cell.
    var cells: [Int64: [Int32]] = [:]
    /// Keyed by ``pairKey(device:other:)`` in the pair's orientation (`device` matches `among`).
    var pairs: [UInt64: Pair] = [:]
    /// The grid: rows of `cellHeight` degrees of latitude, each cut into as many columns as make
    /// a cell at least `cellHeight` wide in metres at the row's edge nearer a pole.
    let cellHeight: Double
    let rowCount: Int64

    init(trigger: ProximityTrigger, filters: PositionFilters) {
        self.trigger = trigger
        self.filters = filters
        // Bounded below so that row and column numbers fit in 32 bits each.
        cellHeight = min(180, max(1e-5, 2 * trigger.near / Earth.metresPerDegree))
        rowCount = Int64((180 / cellHeight).rounded(.up))
    }

    static func pairKey(device: Int32, other: Int32) -> UInt64 {
        UInt64(UInt32(bitPattern: device)) << 32 | UInt64(UInt32(bitPattern: other))
    }

    static func devices(of key: UInt64) -> (device: Int32, other: Int32) {
        (Int32(bitPattern: UInt32(truncatingIfNeeded: key >> 32)), Int32(bitPattern: UInt32(truncatingIfNeeded: key)))
    }

    /// Makes room for `device`'s member.
    @inline(__always)
    func ensure(_ device: Int32) {
        if members.count <= Int(device) {
            members.append(contentsOf: repeatElement(Member(), count: Int(device) + 1 - members.count))
        }
    }

    // MARK: The grid

    private func row(of latitude: Double) -> Int64 {
        min(rowCount - 1, max(0, Int64(((latitude + 90) / cellHeight).rounded(.down))))
    }

    private func columns(inRow row: Int64) -> Int64 {
        let south = Double(row) * cellHeight - 90
        let edge = min(90, max(abs(south), abs(south + cellHeight)))
        let count = (360 * cos(edge * .pi / 180) / cellHeight).rounded(.down)
        return max(1, min(Int64(360 / cellHeight), Int64(count)))
    }

    private func column(of longitude: Double, columns: Int64) -> Int64 {
        let column = Int64(((longitude + 180) / (360 / Double(columns))).rounded(.down))
        return ((column % columns) + columns) % columns
    }

    private func cell(of coordinate: Coordinate) -> Int64 {
        let row = row(of: coordinate.latitude)
        return row << 32 | column(of: coordinate.longitude, columns: columns(inRow: row))
    }

    /// Moves the device's fix to `coordinate` at `time`, and its entry in the grid with it.
    func move(_ device: Int32, to coordinate: Coordinate, time: Timestamp) {
        let cell = cell(of: coordinate)
        let had = members[Int(device)].hasFix
        members[Int(device)].latitude = coordinate.latitude
        members[Int(device)].longitude = coordinate.longitude
        members[Int(device)].time = time
        if had && members[Int(device)].cell == cell { return }
        if had { leaveCell(device) }
        members[Int(device)].cell = cell
        members[Int(device)].cellIndex = Int32(cells[cell, default: []].count)
        cells[cell, default: []].append(device)
    }

    /// Takes the device out of its cell (swapping the cell's last device into its place).
    private func leaveCell(_ device: Int32) {
        let cell = members[Int(device)].cell
        let index = Int(members[Int(device)].cellIndex)
        guard var list = cells.removeValue(forKey: cell) else { return }
        let last = list.removeLast()
        if last != device {
            list[index] = last
            members[Int(last)].cellIndex = Int32(index)
        }
        if !list.isEmpty { cells[cell] = list }
        members[Int(device)].cellIndex = -1
    }

    /// Calls `body` with every device whose fix lies in a cell that a disc of `radius` metres
    /// around `coordinate` may reach: a superset of those within `radius` (haversine).
    func forEachDevice(near coordinate: Coordinate, radius: Double, _ body: (Int32) -> Void) {
        let latitude = coordinate.latitude
        // A great-circle distance d has |Δφ| ≤ d/R; and hav(d/R) ≥ cos φ₁ cos φ₂ hav(Δλ), which
        // bounds Δλ once cos φ₂ is bounded below over the rows searched. Margins cover rounding.
        let latitudeReach = radius / Earth.metresPerDegree * (1 + 1e-9) + 1e-9
        let farthest = min(90, abs(latitude) + latitudeReach) * .pi / 180
        let halfAngle = sin(radius / (2 * Earth.radius))
        let bound = cos(latitude * .pi / 180) * cos(farthest)
        var longitudeReach = 180.0
        if bound > halfAngle * halfAngle {
            let ratio = halfAngle / bound.squareRoot()
            if ratio < 1 { longitudeReach = 2 * asin(ratio) * 180 / .pi * (1 + 1e-9) + 1e-9 }
        }
        for row in row(of: latitude - latitudeReach)...row(of: latitude + latitudeReach) {
            let columns = columns(inRow: row)
            let width = 360 / Double(columns)
            let first = Int64(((coordinate.longitude - longitudeReach + 180) / width).rounded(.down))
            let last = Int64(((coordinate.longitude + longitudeReach + 180) / width).rounded(.down))
            let span = longitudeReach >= 180 || last - first + 1 >= columns ? 0..<columns : first..<(last + 1)
            for column in span {
                let wrapped = ((column % columns) + columns) % columns
                guard let list = cells[row << 32 | wrapped] else { continue }
                for device in list { body(device) }
            }
        }
    }

    // MARK: Pairs

    /// Records that `a` and `b` have a stored pair.
    func link(_ a: Int32, _ b: Int32) {
        if !members[Int(a)].partners.contains(b) { members[Int(a)].partners.append(b) }
        if !members[Int(b)].partners.contains(a) { members[Int(b)].partners.append(a) }
    }

    func unlink(_ a: Int32, _ b: Int32) {
        if let index = members[Int(a)].partners.firstIndex(of: b) { members[Int(a)].partners.remove(at: index) }
        if let index = members[Int(b)].partners.firstIndex(of: a) { members[Int(b)].partners.remove(at: index) }
    }

    /// Stores a pair's state, or drops it (and its links) when it is idle.
    func store(_ pair: Pair, device: Int32, other: Int32) {
        let key = Self.pairKey(device: device, other: other)
        if pair.isIdle {
            if pairs.removeValue(forKey: key) != nil { unlink(device, other) }
        } else {
            if pairs.updateValue(pair, forKey: key) == nil { link(device, other) }
        }
    }

    /// Frees everything of `device`: its fix, its place in the grid and every pair it is in.
    func forget(_ device: Int32) {
        guard Int(device) < members.count else { return }
        if members[Int(device)].hasFix { leaveCell(device) }
        for partner in members[Int(device)].partners {
            pairs[Self.pairKey(device: device, other: partner)] = nil
            pairs[Self.pairKey(device: partner, other: device)] = nil
            if let index = members[Int(partner)].partners.firstIndex(of: device) {
                members[Int(partner)].partners.remove(at: index)
            }
        }
        members[Int(device)] = Member()
    }
}
