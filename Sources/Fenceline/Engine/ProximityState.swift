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
    /// What the grid has cost so far (see ``Engine/ProximityWork``); not kept in checkpoints.
    var work = Engine.ProximityWork()

    /// What the engine knows of one device for this request: plain values, so that reading one
    /// retains nothing.
    struct Member {
        /// The last accepted fix (its time moved on by a refresh, SPEC §12 filters); `nan`
        /// latitude before the first.
        var latitude = Double.nan
        var longitude = 0.0
        var time = Timestamp(microseconds: 0)
        /// Its grid cell, and its neighbours in the cell's list (-1: none), when it has a fix.
        var cell: Int64 = 0
        var next: Int32 = -1
        var previous: Int32 = -1
        var role = Role.unknown
        /// Whether it is in a stored pair (its partners are in ``ProximityState/partners``).
        var isPaired = false
        /// Whether it is in the grid: a device whose fix grew too old to pair (`maxAge`) is
        /// taken out while it is in no pair, and comes back with its next fix.
        var inGrid = false

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
    struct Pair: Equatable {
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
    /// Members by device id, `memberCount` of them, on raw storage (see ``Member``).
    private var storage: UnsafeMutablePointer<Member>
    private var capacity = 0
    private(set) var memberCount = 0
    /// The first device of each occupied cell.
    private(set) var cells = CellTable()
    /// The devices each paired device has a stored pair with.
    var partners: [Int32: [Int32]] = [:]
    /// Keyed by ``pairKey(device:other:)`` in the pair's orientation (`device` matches `among`):
    /// the pairs inside or waiting out a delay.
    var pairs: [UInt64: Pair] = [:]
    /// The pairs `repeats: false` has used up, kept apart so that no fix evaluates them again (a
    /// truck that met ten thousand tags would otherwise walk them all at each fix), and by device,
    /// for forgetting one.
    var done: Set<UInt64> = []
    var doneWith: [Int32: [Int32]] = [:]
    /// The grid: rows of `cellHeight` degrees of latitude, each cut into as many columns as make
    /// a cell at least `cellHeight` wide in metres at the row's edge nearer a pole.
    let cellHeight: Double
    let rowCount: Int64
    /// Each row's column count once worked out (0 before), made at the first fix when there are
    /// few enough rows to keep them: it costs a cosine otherwise, twice per fix.
    private var columnCounts: [Int32] = []
    /// `sin(near / 2R)`, for the longitude reach of a query.
    private let halfAngle: Double
    private let latitudeReach: Double

    init(trigger: ProximityTrigger, filters: PositionFilters) {
        self.trigger = trigger
        self.filters = filters
        storage = .allocate(capacity: 0)
        // Bounded below so that row and column numbers fit in 32 bits each.
        cellHeight = min(180, max(1e-5, 2 * trigger.near / Earth.metresPerDegree))
        rowCount = Int64((180 / cellHeight).rounded(.up))
        // Half the circumference and more reach every point alike.
        let reach = min(trigger.near, Double.pi * Earth.radius)
        halfAngle = sin(reach / (2 * Earth.radius))
        // A great-circle distance d has |Δφ| ≤ d/R; the margins cover rounding.
        latitudeReach = min(180, reach / Earth.metresPerDegree * (1 + 1e-9) + 1e-9)
    }

    deinit {
        storage.deinitialize(count: memberCount)
        storage.deallocate()
    }

    /// Device `device`'s member, which ``ensure(_:)`` made.
    @inline(__always)
    subscript(device: Int32) -> Member {
        get { storage[Int(device)] }
        set { storage[Int(device)] = newValue }
    }

    /// Every member, in device order (for checkpoints and tests).
    var members: [Member] { Array(UnsafeBufferPointer(start: storage, count: memberCount)) }

    /// The devices `device` has a stored pair with.
    @inline(__always)
    func partners(of device: Int32) -> [Int32] {
        storage[Int(device)].isPaired ? partners[device] ?? [] : []
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
        guard memberCount <= Int(device) else { return }
        if capacity <= Int(device) {
            let grown = max(Int(device) + 1, capacity * 2, 64)
            let larger = UnsafeMutablePointer<Member>.allocate(capacity: grown)
            larger.moveInitialize(from: storage, count: memberCount)
            storage.deallocate()
            storage = larger
            capacity = grown
        }
        (storage + memberCount).initialize(repeating: Member(), count: Int(device) + 1 - memberCount)
        memberCount = Int(device) + 1
    }

    // MARK: The grid

    @inline(__always)
    private func row(of latitude: Double) -> Int64 {
        // Clamped before the conversion: a query's reach may take it past a pole.
        min(rowCount - 1, max(0, Int64((min(180, max(0, latitude + 90)) / cellHeight).rounded(.down))))
    }

    @inline(__always)
    private func columns(inRow row: Int64) -> Int64 {
        if columnCounts.isEmpty && rowCount <= 1 << 20 { columnCounts = Array(repeating: 0, count: Int(rowCount)) }
        if !columnCounts.isEmpty, columnCounts[Int(row)] > 0 { return Int64(columnCounts[Int(row)]) }
        let south = Double(row) * cellHeight - 90
        let edge = min(90, max(abs(south), abs(south + cellHeight)))
        let count = (360 * cos(edge * .pi / 180) / cellHeight).rounded(.down)
        let columns = max(1, min(Int64(360 / cellHeight), Int64(count)))
        if !columnCounts.isEmpty { columnCounts[Int(row)] = Int32(columns) }
        return columns
    }

    @inline(__always)
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
        let had = storage[Int(device)].inGrid
        storage[Int(device)].latitude = coordinate.latitude
        storage[Int(device)].longitude = coordinate.longitude
        storage[Int(device)].time = time
        if had && storage[Int(device)].cell == cell { return }
        if had { leaveCell(device) }
        enter(device, cell: cell)
    }

    /// Moves the time of the device's fix only (a refresh), putting it back in the grid.
    func refresh(_ device: Int32, time: Timestamp) {
        storage[Int(device)].time = time
        if !storage[Int(device)].inGrid { enter(device, cell: storage[Int(device)].cell) }
    }

    /// Takes a device whose fix can pair no more out of the grid (see ``Member/inGrid``).
    func evict(_ device: Int32) {
        if storage[Int(device)].inGrid { leaveCell(device) }
    }

    /// Makes the device first in the cell's list.
    private func enter(_ device: Int32, cell: Int64) {
        let head = cells.head(of: cell)
        storage[Int(device)].inGrid = true
        storage[Int(device)].cell = cell
        storage[Int(device)].previous = -1
        storage[Int(device)].next = head
        if head >= 0 { storage[Int(head)].previous = device }
        cells.setHead(device, of: cell)
    }

    /// Takes the device out of its cell's list.
    private func leaveCell(_ device: Int32) {
        let (previous, next) = (storage[Int(device)].previous, storage[Int(device)].next)
        if previous >= 0 {
            storage[Int(previous)].next = next
        } else {
            cells.setHead(next, of: storage[Int(device)].cell)
        }
        if next >= 0 { storage[Int(next)].previous = previous }
        storage[Int(device)].previous = -1
        storage[Int(device)].next = -1
        storage[Int(device)].inGrid = false
    }

    /// Calls `body` with every device whose fix lies in a cell that a disc of `near` metres
    /// around `coordinate` may reach: a superset of those within `near` (haversine).
    @inline(__always)
    func forEachDevice(near coordinate: Coordinate, _ body: (Int32) -> Void) {
        let latitude = coordinate.latitude
        // hav(d/R) ≥ cos φ₁ cos φ₂ hav(Δλ), and both cosines are at least that of the farthest
        // latitude searched, which bounds Δλ; asin(x) ≤ 1.1 x for x ≤ 0.5.
        let farthest = cos(min(90, abs(latitude) + latitudeReach) * .pi / 180)
        var longitudeReach = 180.0
        if farthest > 0 {
            let ratio = halfAngle / farthest
            if ratio <= 0.5 {
                longitudeReach = 2.2 * ratio * 180 / .pi * (1 + 1e-9) + 1e-9
            } else if ratio < 1 {
                longitudeReach = 2 * asin(ratio) * 180 / .pi * (1 + 1e-9) + 1e-9
            }
        }
        for row in row(of: latitude - latitudeReach)...row(of: latitude + latitudeReach) {
            let columns = columns(inRow: row)
            let width = 360 / Double(columns)
            let first = Int64(((coordinate.longitude - longitudeReach + 180) / width).rounded(.down))
            let last = Int64(((coordinate.longitude + longitudeReach + 180) / width).rounded(.down))
            let span = longitudeReach >= 180 || last - first + 1 >= columns ? 0..<columns : first..<(last + 1)
            for column in span {
                let wrapped = ((column % columns) + columns) % columns
                var device = cells.head(of: row << 32 | wrapped)
                while device >= 0 {
                    // Read first: `body` may take the device out of the list.
                    let next = storage[Int(device)].next
                    work.devicesLookedAt += 1
                    body(device)
                    device = next
                }
            }
        }
    }

    // MARK: Pairs

    /// Records that `a` and `b` have a stored pair.
    func link(_ a: Int32, _ b: Int32) {
        for (device, partner) in [(a, b), (b, a)] where !(partners[device]?.contains(partner) ?? false) {
            partners[device, default: []].append(partner)
            storage[Int(device)].isPaired = true
        }
    }

    func unlink(_ a: Int32, _ b: Int32) {
        for (device, partner) in [(a, b), (b, a)] {
            guard let index = partners[device]?.firstIndex(of: partner) else { continue }
            partners[device]!.remove(at: index)
            if partners[device]!.isEmpty {
                partners[device] = nil
                storage[Int(device)].isPaired = false
            }
        }
    }

    /// Whether the pair of `a` and `b`, in either orientation, is used up.
    @inline(__always)
    func isDone(_ a: Int32, _ b: Int32) -> Bool {
        !done.isEmpty
            && (done.contains(Self.pairKey(device: a, other: b)) || done.contains(Self.pairKey(device: b, other: a)))
    }

    /// Stores a pair's state, or drops it (and its links) when it is idle; a used-up pair goes
    /// to ``done``.
    func store(_ pair: Pair, device: Int32, other: Int32) {
        let key = Self.pairKey(device: device, other: other)
        if pair.isDone {
            if pairs.removeValue(forKey: key) != nil { unlink(device, other) }
            if done.insert(key).inserted {
                doneWith[device, default: []].append(other)
                doneWith[other, default: []].append(device)
            }
        } else if pair.isIdle {
            if pairs.removeValue(forKey: key) != nil { unlink(device, other) }
        } else {
            if pairs.updateValue(pair, forKey: key) == nil { link(device, other) }
        }
    }

    /// Frees everything of `device`: its fix, its place in the grid and every pair it is in.
    func forget(_ device: Int32) {
        guard Int(device) < memberCount else { return }
        if storage[Int(device)].inGrid { leaveCell(device) }
        for partner in partners(of: device) {
            pairs[Self.pairKey(device: device, other: partner)] = nil
            pairs[Self.pairKey(device: partner, other: device)] = nil
            unlink(device, partner)
        }
        for partner in doneWith.removeValue(forKey: device) ?? [] {
            done.remove(Self.pairKey(device: device, other: partner))
            done.remove(Self.pairKey(device: partner, other: device))
            doneWith[partner]?.removeAll { $0 == device }
            if doneWith[partner]?.isEmpty == true { doneWith[partner] = nil }
        }
        storage[Int(device)] = Member()
    }

    /// Whether the request holds anything of `device`: a fix, a pair, a used-up pair.
    func holds(_ device: Int32) -> Bool {
        Int(device) < memberCount
            && (storage[Int(device)].hasFix || storage[Int(device)].isPaired || doneWith[device] != nil)
    }

    /// Gives every device the number `newID` maps it to (the engine's devices were renumbered;
    /// the dropped ones, -1, were forgotten and hold nothing here), on storage and a grid of the
    /// size the members left need.
    func renumber(_ newID: [Int32], count: Int) {
        let members = UnsafeMutablePointer<Member>.allocate(capacity: count)
        members.initialize(repeating: Member(), count: count)
        var kept = 0
        for device in 0..<memberCount where newID[device] >= 0 {
            var member = storage[device]
            member.next = -1
            member.previous = -1
            member.inGrid = false
            members[Int(newID[device])] = member
            kept = max(kept, Int(newID[device]) + 1)
        }
        let grid = (0..<memberCount).compactMap { storage[$0].inGrid && newID[$0] >= 0 ? newID[$0] : nil }
        storage.deinitialize(count: memberCount)
        storage.deallocate()
        storage = members
        capacity = count
        memberCount = kept
        cells = CellTable()
        for device in grid { enter(device, cell: storage[Int(device)].cell) }
        func renumbered(_ key: UInt64) -> UInt64 {
            let (device, other) = Self.devices(of: key)
            return Self.pairKey(device: newID[Int(device)], other: newID[Int(other)])
        }
        func renumbered(_ lists: [Int32: [Int32]]) -> [Int32: [Int32]] {
            Dictionary(uniqueKeysWithValues: lists.map { (newID[Int($0.key)], $0.value.map { newID[Int($0)] }) })
        }
        pairs = Dictionary(uniqueKeysWithValues: pairs.map { (renumbered($0.key), $0.value) })
        done = Set(done.map { renumbered($0) })
        partners = renumbered(partners)
        doneWith = renumbered(doneWith)
    }
}

@available(*, unavailable)
extension ProximityState: Sendable {}
