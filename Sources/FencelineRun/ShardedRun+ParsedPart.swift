import Fenceline
import FencelineFormats
import Foundation

/// How a block of NDJSON lines is parsed in parallel for the shards: each parse worker's share
/// of the lines, the fields of the usual fix line, and the work the workers share.
extension ShardedRun {
    /// A canonical fix line as a parse worker leaves it: its fields and, when the device is at
    /// most 16 bytes (the usual), a copy of its name here; a longer one is copied to the part's
    /// `longNames`, `parts.device` its range there. The shard reads neither from the block: by
    /// then it may hold the next block, and the name, long evicted from cache (and often parsed on
    /// the other core), would cost a cache miss per line.
    struct CompactFix {
        var parts: NDJSONReadingDecoder.CanonicalParts
        var name: (UInt64, UInt64) = (0, 0)
        /// The copy's length; -1 when the name is longer and is read from the part's `longNames`.
        var nameCount: Int8 = -1

        init(_ parts: NDJSONReadingDecoder.CanonicalParts, name: UnsafeBufferPointer<UInt8>) {
            self.parts = parts
            guard name.count <= 16 else { return }
            withUnsafeMutableBytes(of: &self.name) { copy in
                copy.copyMemory(from: UnsafeRawBufferPointer(name))
            }
            nameCount = Int8(name.count)
        }

        /// Calls `body` with the device name's bytes: the copy, or else its range of `longNames`.
        @inline(__always)
        func withName<Result>(in longNames: UnsafePointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Result)
            -> Result
        {
            guard nameCount >= 0 else {
                return body(UnsafeBufferPointer(start: longNames + parts.device.lowerBound, count: parts.device.count))
            }
            return withUnsafeBytes(of: name) { bytes in
                body(
                    UnsafeBufferPointer(
                        start: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: Int(nameCount)))
            }
        }

        /// `engine.produce` of the fix, with no `String` made of a name the engine has seen.
        @inline(__always)
        func produce(on engine: Engine, in longNames: UnsafePointer<UInt8>) -> [ProducedEvent] {
            withName(in: longNames) { name in
                engine.produce(
                    deviceNamed: name, time: parts.time, coordinate: parts.coordinate, accuracy: parts.accuracy)
            }
        }

        /// The fix, its device from the copy or else from `longNames`.
        @inline(__always)
        func fix(in longNames: UnsafePointer<UInt8>) -> Fix {
            parts.fix(device: withName(in: longNames) { String(decoding: $0, as: UTF8.self) })
        }
    }

    /// A parsed line of a batch.
    enum Parsed {
        case blank
        /// A canonically laid-out fix line (the usual), its fields in the part's `fixes`.
        case compactFix
        case reading(Reading)
        case control
        case failure(LineError)
    }

    /// One parse worker's share of a block: its lines in order, each parsed, with its routing (for
    /// a fix or sighting, time in µs and shard; shard -1 for anything else) and where it lies in
    /// the block. The storage is kept from block to block and overwritten in place: a canonical fix
    /// (the usual line) writes its fields and its routing and nothing else (writing `.compactFix`
    /// into `items` destroyed the old entry there first, and with the arrays' appends that was two
    /// fifths of the parse); the workers release the last block's readings in parallel.
    final class ParsedPart: @unchecked Sendable {
        /// A line's routing and place.
        struct Line {
            var time: Int64
            var shard: Int32
            /// A canonical fix, read from `fixes` alone; its `items` entry is stale.
            var compact: Bool
            var start: Int
            var end: Int
        }

        /// The parsed lines that are not canonical fixes, at their positions (other positions
        /// hold stale entries or `.blank`); stays put while a batch runs.
        @exclusivity(unchecked) private(set) var items: UnsafeMutablePointer<Parsed>
        /// Per line, for a canonical fix, its fields with a copy of a short device name, or a long
        /// one's range of `longNames`: plain values, so neither the parse nor the shard copies a
        /// string or an enum payload.
        @exclusivity(unchecked) private(set) var fixes: UnsafeMutablePointer<CompactFix>
        @exclusivity(unchecked) private(set) var lines: UnsafeMutablePointer<Line>
        /// The names of canonical fixes' devices longer than 16 bytes, one after another.
        @exclusivity(unchecked) private(set) var longNames: UnsafeMutablePointer<UInt8>
        @exclusivity(unchecked) private var longNamesCount = 0
        @exclusivity(unchecked) private var longNamesCapacity = 1024
        /// How many entries of `items` are initialized (a prefix).
        @exclusivity(unchecked) private var initialized = 0
        @exclusivity(unchecked) private var capacity = 1024
        @exclusivity(unchecked) private(set) var count = 0
        /// Keeps the next object's fields off this one's cache lines: each parse worker writes its
        /// part's `count` for every line (see ``CacheLinePadding``).
        private let padding = CacheLinePadding()

        init() {
            items = .allocate(capacity: capacity)
            fixes = .allocate(capacity: capacity)
            lines = .allocate(capacity: capacity)
            longNames = .allocate(capacity: longNamesCapacity)
        }

        deinit {
            items.deinitialize(count: initialized)
            items.deallocate()
            fixes.deallocate()
            lines.deallocate()
            longNames.deallocate()
        }

        /// The part's storage for the shards.
        var view: PartView { PartView(items: items, fixes: fixes, longNames: longNames) }

        func removeAll() {
            count = 0
            longNamesCount = 0
        }

        /// The parsed line at `position`.
        func item(at position: Int) -> Parsed {
            lines[position].compact ? .compactFix : items[position]
        }

        /// Appends a canonical fix line whose device is `name` (`fix.device`, its range of the
        /// line, is left unused for a short name and becomes a long one's range of `longNames`).
        func append(
            fix: NDJSONReadingDecoder.CanonicalParts, name: UnsafeBufferPointer<UInt8>, shard: Int32, start: Int,
            end: Int
        ) {
            reserveOne()
            (lines + count).initialize(
                to: Line(time: fix.time.microseconds, shard: shard, compact: true, start: start, end: end))
            var fix = fix
            if name.count > 16 {
                // Kept here, with the range where it lies.
                if longNamesCount + name.count > longNamesCapacity {
                    longNamesCapacity = max(longNamesCapacity * 2, longNamesCount + name.count)
                    let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: longNamesCapacity)
                    grown.initialize(from: longNames, count: longNamesCount)
                    longNames.deallocate()
                    longNames = grown
                }
                (longNames + longNamesCount).initialize(from: name.baseAddress!, count: name.count)
                fix.device = longNamesCount..<(longNamesCount + name.count)
                longNamesCount += name.count
            }
            (fixes + count).initialize(to: CompactFix(fix, name: name))
            count += 1
        }

        /// Appends a line of any other kind.
        func append(_ item: Parsed, time: Int64, shard: Int32, start: Int, end: Int) {
            reserveOne()
            if count < initialized {
                items[count] = item
            } else {
                // Entries skipped by canonical fixes since the last one written are filled first.
                while initialized < count {
                    (items + initialized).initialize(to: .blank)
                    initialized += 1
                }
                (items + count).initialize(to: item)
                initialized += 1
            }
            (lines + count).initialize(to: Line(time: time, shard: shard, compact: false, start: start, end: end))
            count += 1
        }

        private func reserveOne() {
            guard count == capacity else { return }
            func grow<Element>(_ storage: inout UnsafeMutablePointer<Element>, moving moved: Int) {
                let grown = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
                grown.moveInitialize(from: storage, count: moved)
                storage.deallocate()
                storage = grown
            }
            grow(&items, moving: initialized)
            grow(&fixes, moving: count)
            grow(&lines, moving: count)
            capacity *= 2
        }
    }

    /// A parse part's storage as the shards read it during a batch.
    struct PartView {
        let items: UnsafeMutablePointer<Parsed>
        let fixes: UnsafeMutablePointer<CompactFix>
        let longNames: UnsafeMutablePointer<UInt8>
    }
}

/// What the parse workers share: the block (read only) and a part each, which only its worker
/// writes.
struct ParseWork: @unchecked Sendable {
    let block: UnsafeBufferPointer<UInt8>
    let parts: [ShardedRun.ParsedPart]
    let shards: Int
    /// For CSV input, its rows' decoder (`nil` after a bad header): rows it reads plainly are
    /// parsed here, any other line is decoded in input order by the coordinator.
    let csv: (isCSV: Bool, rows: CSVReadingDecoder?)
    /// Whether fixes keep their speed, heading and altitude: only a reorder window hands the
    /// engine whole fixes; otherwise they are checked and not converted.
    let motion: Bool

    /// Where share `part` of the block begins: the first line start at or after its even split.
    func start(of part: Int) -> Int {
        guard part > 0 else { return 0 }
        guard part < parts.count else { return block.count }
        let target = block.count * part / parts.count
        guard target > 0, let base = block.baseAddress else { return target }
        guard let newline = memchr(base + target - 1, 0x0A, block.count - target + 1) else { return block.count }
        return base.distance(to: newline.assumingMemoryBound(to: UInt8.self)) + 1
    }

    /// Splits share `part` into lines (a `\r` before `\n` dropped) and parses each into its part,
    /// noting each reading's time and shard for the coordinator.
    func parse(part index: Int) {
        let part = parts[index]
        part.removeAll()
        let decoder = NDJSONReadingDecoder()
        let rows = csv.rows?.withOwnTimeCache()
        block.forEachLine(from: start(of: index), to: start(of: index + 1)) { start, end in
            let line = UnsafeBufferPointer(rebasing: block[start..<end])
            if csv.isCSV {
                if let fix = rows?.canonicalParts(line) {
                    let name = UnsafeBufferPointer(rebasing: line[fix.device])
                    let shard = ShardedRun.shard(ofHash: DeviceHash.of(bytes: name), count: shards)
                    part.append(fix: fix, name: name, shard: Int32(shard), start: start, end: end)
                } else {
                    part.append(.control, time: 0, shard: -1, start: start, end: end)
                }
                return
            }
            if let fix = decoder.canonicalParts(line, motion: motion) {
                let name = UnsafeBufferPointer(rebasing: line[fix.device])
                let shard = ShardedRun.shard(ofHash: DeviceHash.of(bytes: name), count: shards)
                part.append(fix: fix, name: name, shard: Int32(shard), start: start, end: end)
                return
            }
            do throws(LineError) {
                switch try decoder.decode(line, deferringControls: true, tryingCanonical: false) {
                case .blank: part.append(.blank, time: 0, shard: -1, start: start, end: end)
                case .reading(let reading):
                    var routing: (time: Int64, shard: Int32) = (0, -1)
                    switch reading {
                    case .fix(let fix):
                        routing = (fix.time.microseconds, Int32(ShardedRun.shard(of: fix.device, count: shards)))
                    case .sighting(let sighting):
                        routing = (
                            sighting.time.microseconds, Int32(ShardedRun.shard(of: sighting.device, count: shards))
                        )
                    case .control: break
                    }
                    part.append(
                        .reading(reading), time: routing.time, shard: routing.shard, start: start, end: end)
                case .control: part.append(.control, time: 0, shard: -1, start: start, end: end)
                }
            } catch {
                part.append(.failure(error), time: 0, shard: -1, start: start, end: end)
            }
        }
    }
}

/// A cache line's worth of bytes at the end of an object two threads write at once (parse parts,
/// shards): objects allocated one after another sat on shared cache lines, and each thread's
/// writes evicted the line from the other's core.
struct CacheLinePadding {
    private var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}
