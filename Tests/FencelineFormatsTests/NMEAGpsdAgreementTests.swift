import Fenceline
import FencelineFormats
import Foundation
import TestSupport
import Testing

/// `NMEADecoder` against gpsd 3.22 on the 83 real captures of `Data/nmea` (see its PROVENANCE.md).
///
/// Each capture is decoded whole (device `gps`); gpsd's fix at a time is the last `TPV` with
/// `mode` ≥ 2 and that `time` (to the millisecond) in the capture's `.chk`. For each of our fixes:
/// - **agree**: gpsd has a fix at the same time, within 1e-6° in latitude and longitude;
/// - **agree+1024w**: the same once our time is moved on by 1024 weeks. gpsd 3.22 assumes a GPS week
///   roll-over for every date before 2017 and adds 1024 weeks (a 2007 log comes out in 2027); we
///   keep the date the receiver sent;
/// - **contradict**: gpsd's position differs from ours, but it is the position that another of the
///   capture's own sentences of that second gives (a chartplotter, `bundg_zeus_9`, stamps one
///   sentence with the position of the second before, and `humminbird-M37`'s `INGLL` and `INRMC`
///   of one second disagree; which one gpsd reports depends on where its reporting cycle ends);
/// - **differ**: anything else; there must be none;
/// - **oursOnly**: gpsd has no fix at that time. gpsd reports an epoch when the sentence it takes as
///   the end of a cycle arrives; it misses the first epoch (or two) while it learns the cycle, the
///   last one of a log or of a piece of one (logs spliced at `#` comments), and epochs in which the
///   receiver skipped that sentence. `bt451` also has its fix at 14:33:06, which gpsd dates a day
///   late (below).
/// - **gpsdOnly**: fixes gpsd has and we do not: in `bt451` two captures are spliced with the time
///   going back 52 minutes, and gpsd, which moves to the next day whenever the hour goes back, dates
///   the first GGA 2009-12-10; the RMC after it says 2009-12-09, as we do.
/// - **errors**: lines the decoder rejects: sentences whose checksum is wrong (gpsd drops them as
///   well: none is echoed in the `.chk`), sentences cut short (no checksum, or a broken one), and
///   tails of broken lines without `$`.
///
/// The table and every exception are a golden file, `Data/nmea/gpsd-agreement.txt` (recorded when
/// missing or with `RECORD_GOLDEN=1`), so any change in behaviour shows as a diff there.
@Suite struct NMEAGpsdAgreementTests {
    static let directory = Fixtures.dataDirectory.appendingPathComponent("nmea")
    static let golden = directory.appendingPathComponent("gpsd-agreement.txt")
    /// 1024 GPS weeks in milliseconds.
    static let rollover: Int64 = 1024 * 7 * 86_400_000
    static let millisecondsPerDay: Int64 = 86_400_000

    /// What one capture gave.
    struct Tally {
        var name = ""
        var ours = 0
        var theirs = 0
        var agreeing = 0
        var agreeingShifted = 0
        var contradicting: [String] = []
        var disagreeing: [String] = []
        var oursAlone: [String] = []
        var theirsAlone: [String] = []
        var errors: [String] = []

        var counts: [Int] {
            [
                ours, theirs, agreeing, agreeingShifted, contradicting.count, disagreeing.count, oursAlone.count,
                theirsAlone.count, errors.count,
            ]
        }
    }

    static let columns = [
        "ours", "gpsd", "agree", "agree+1024w", "contradict", "differ", "oursOnly", "gpsdOnly", "errors",
    ]

    /// Every line of `url`, split on `\n` (a `\r` stays for the decoder to drop).
    static func lines(_ url: URL) throws -> [[UInt8]] {
        let bytes = [UInt8](try Data(contentsOf: url))
        return bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
    }

    /// gpsd's fixes by millisecond: the last `TPV` with `mode` ≥ 2, `time`, `lat` and `lon` at each time.
    static func gpsdFixes(_ url: URL) throws -> [Int64: Coordinate] {
        var fixes: [Int64: Coordinate] = [:]
        for line in try lines(url) where line.first == UInt8(ascii: "{") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                object["class"] as? String == "TPV", let mode = object["mode"] as? Int, mode >= 2,
                let time = object["time"] as? String, let lat = object["lat"] as? Double,
                let lon = object["lon"] as? Double
            else { continue }
            let instant = try #require(Timestamp(rfc3339: time))
            fixes[instant.microseconds / 1000] = Coordinate(latitude: lat, longitude: lon)
        }
        return fixes
    }

    /// Every position the capture's RMC, GGA and GLL sentences state, by millisecond of the day, read
    /// naively (no checksum, no validity) and independently of the decoder.
    static func statedPositions(_ lines: [[UInt8]]) -> [Int64: [Coordinate]] {
        func degrees(_ value: Substring, _ hemisphere: Substring) -> Double? {
            guard let number = Double(value) else { return nil }
            let whole = (number / 100).rounded(.towardZero)
            let angle = whole + (number - whole * 100) / 60
            return hemisphere == "S" || hemisphere == "W" ? -angle : angle
        }
        var positions: [Int64: [Coordinate]] = [:]
        for line in lines {
            let text = String(decoding: line, as: UTF8.self)
            guard let dollar = text.lastIndex(of: "$") else { continue }
            let fields = text[dollar...].split(separator: "*")[0].split(
                separator: ",", omittingEmptySubsequences: false)
            guard fields.count > 6, fields[0].count == 6 else { continue }
            let (time, at): (Substring, Int) =
                switch fields[0].suffix(3) {
                case "RMC": (fields[1], 3)
                case "GGA": (fields[1], 2)
                case "GLL": (fields[5], 1)
                default: ("", 0)
                }
            guard time.count >= 6, let seconds = Double(time.dropFirst(4)), let hhmm = Int(time.prefix(4)),
                let lat = degrees(fields[at], fields[at + 1]), let lon = degrees(fields[at + 2], fields[at + 3])
            else { continue }
            let key = Int64(hhmm / 100 * 3_600_000 + hhmm % 100 * 60_000) + Int64((seconds * 1000).rounded())
            positions[key, default: []].append(Coordinate(latitude: lat, longitude: lon))
        }
        return positions
    }

    static func close(_ a: Coordinate, _ b: Coordinate) -> Bool {
        abs(a.latitude - b.latitude) <= 1e-6 && abs(a.longitude - b.longitude) <= 1e-6
    }

    static func tally(_ name: String) throws -> Tally {
        var tally = Tally(name: name)
        let theirs = try gpsdFixes(directory.appendingPathComponent(name + ".chk"))
        tally.theirs = theirs.count
        let lines = try lines(directory.appendingPathComponent(name))
        var decoder = NMEADecoder(device: "gps")
        var fixes: [(fix: Fix, line: Int)] = []
        for (index, line) in lines.enumerated() {
            do {
                let emitted = try line.withUnsafeBufferPointer { buffer throws(LineError) in
                    try decoder.decode(buffer, lineNumber: index + 1)
                }
                if let (reading, at) = emitted, case .fix(let fix) = reading { fixes.append((fix, at)) }
            } catch {
                tally.errors.append("\(index + 1) \(error.field ?? "-"): \(error.message)")
            }
        }
        if let (reading, at) = decoder.finish(), case .fix(let fix) = reading { fixes.append((fix, at)) }
        tally.ours = fixes.count
        let stated = statedPositions(lines)
        var matched: Set<Int64> = []
        for (fix, line) in fixes {
            var key = fix.time.microseconds / 1000
            var shifted = false
            if theirs[key] == nil, theirs[key + rollover] != nil {
                key += rollover
                shifted = true
            }
            guard let gpsd = theirs[key] else {
                tally.oursAlone.append("\(line)")
                continue
            }
            matched.insert(key)
            if close(gpsd, fix.coordinate) {
                if shifted { tally.agreeingShifted += 1 } else { tally.agreeing += 1 }
            } else if let own = stated[key % millisecondsPerDay], own.contains(where: { close($0, gpsd) }),
                own.contains(where: { close($0, fix.coordinate) })
            {
                tally.contradicting.append("\(line)")
            } else {
                tally.disagreeing.append(
                    "\(line) ours \(fix.coordinate.latitude),\(fix.coordinate.longitude) "
                        + "gpsd \(gpsd.latitude),\(gpsd.longitude)")
            }
        }
        tally.theirsAlone = theirs.keys.filter { !matched.contains($0) }.sorted().map {
            Timestamp(microseconds: $0 * 1000).rfc3339
        }
        return tally
    }

    static var captures: [String] {
        get throws {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".log") }
                .sorted()
        }
    }

    static func report(_ tallies: [Tally]) -> String {
        func cell(_ text: String) -> String { String(repeating: " ", count: max(1, 12 - text.count)) + text }
        func label(_ text: String) -> String { text.padding(toLength: 34, withPad: " ", startingAt: 0) }
        var lines = [
            "# NMEADecoder against gpsd 3.22 on Data/nmea; written by NMEAGpsdAgreementTests (RECORD_GOLDEN=1",
            "# re-records it), which says what each column means.", "",
            label("capture") + columns.map(cell).joined(),
        ]
        var total = [Int](repeating: 0, count: columns.count)
        for tally in tallies {
            let counts = tally.counts
            lines.append(label(tally.name) + counts.map { cell(String($0)) }.joined())
            for index in counts.indices { total[index] += counts[index] }
        }
        lines.append(label("total (\(tallies.count) captures)") + total.map { cell(String($0)) }.joined())
        lines += ["", "# Exceptions (line numbers are those of an epoch's first sentence)"]
        for tally in tallies {
            for (kind, items) in [
                ("contradict", tally.contradicting), ("differ", tally.disagreeing), ("oursOnly", tally.oursAlone),
                ("gpsdOnly", tally.theirsAlone),
            ] where !items.isEmpty {
                lines.append("\(tally.name) \(kind): \(items.joined(separator: ", "))")
            }
            for error in tally.errors { lines.append("\(tally.name) error: \(error)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func agreesWithGpsdOnEveryCapture() throws {
        let tallies = try Self.captures.map(Self.tally)
        let report = Self.report(tallies)
        print(report)
        #expect(tallies.count == 83)
        #expect(tallies.flatMap(\.disagreeing).isEmpty)
        let agreeing = tallies.reduce(0) { $0 + $1.agreeing + $1.agreeingShifted }
        #expect(agreeing >= 1876)
        let recorded = try? String(contentsOf: Self.golden, encoding: .utf8)
        if recorded == nil || ProcessInfo.processInfo.environment["RECORD_GOLDEN"] == "1" {
            try report.write(to: Self.golden, atomically: true, encoding: .utf8)
        } else {
            #expect(recorded == report, "behaviour changed: diff against Data/nmea/gpsd-agreement.txt")
        }
    }
}
