import Fenceline
import FencelineFormats
import FencelineRun
import Foundation
import Logging
import TestSupport
import Testing

/// How an input's format is told, how GPX points are ordered, and how concatenated gzip members,
/// control records and file devices read through `ReadingSource`.
@Suite struct ReadingSourceTests {
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let directory = Scratch.root.appendingPathComponent("source-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    func gzip(_ text: String) throws -> [UInt8] { try Fixtures.gzip(Array(text.utf8)) }

    func items(_ path: String, format: InputFormat? = nil, device: String? = nil) throws -> [Result<
        Reading, InputError
    >] {
        var items: [Result<Reading, InputError>] = []
        try ReadingSource(path: path, format: format, device: device).forEach { item in
            items.append(item)
            return true
        }
        return items
    }

    @Test func extensionsAreLookedThroughGzip() {
        #expect(InputFormat.fromExtension(of: "a/b/trace.NDJSON") == .ndjson)
        #expect(InputFormat.fromExtension(of: "trace.jsonl.gz") == .ndjson)
        #expect(InputFormat.fromExtension(of: "ride.gpx.gz") == .gpx)
        #expect(InputFormat.fromExtension(of: "rx.nme") == .nmea)
        #expect(InputFormat.fromExtension(of: "points.csv") == .csv)
        #expect(InputFormat.fromExtension(of: "capture.log") == nil)
        #expect(InputFormat.fromExtension(of: "dir.gpx/readings") == nil)
    }

    @Test func contentTellsTheFormatPastCommentsAndByteOrderMarks() {
        #expect(InputFormat.sniff(Array("\u{FEFF}<?xml version=\"1.0\"?><gpx>".utf8)) == .gpx)
        #expect(InputFormat.sniff(Array("# Name: BT-451\n# Date: 2009\n$GPRMC,…".utf8)) == .nmea)
        #expect(InputFormat.sniff(Array("!AIVDM,1,1".utf8)) == .nmea)
        #expect(InputFormat.sniff(Array("  {\"device\":1}".utf8)) == .ndjson)
        #expect(InputFormat.sniff(Array("device,time,lat,lon\n".utf8)) == .csv)
        #expect(InputFormat.sniff([UInt8]()) == .ndjson)
    }

    /// Two gzip members one after the other read as one input.
    @Test func concatenatedGzipMembersReadInOrder() throws {
        let first = #"{"device":"a","time":1,"lat":1,"lon":2}"# + "\n"
        let second = #"{"device":"a","time":2,"lat":1,"lon":3}"# + "\n"
        let path = try file("both.ndjson.gz", try gzip(first) + gzip(second))
        let times = try items(path).compactMap { try? $0.get().time?.seconds }
        #expect(times == [1, 2])
    }

    /// Issue 26, defect 5: a damaged gzip stream gives every line that inflated before the damage,
    /// then one error at the line after them; a line cut off by the damage is not read as a line.
    /// 60,000 lines inflate to several of the chunks a gzip file is inflated in ahead of the reads.
    @Test(arguments: [("crc", 5000), ("cut", 5000), ("crc", 60000), ("cut", 60000)])
    func damagedGzipKeepsEverythingThatInflated(damage: String, lines: Int) throws {
        let text = (0..<lines).map { #"{"device":"d","time":\#($0 + 1),"lat":1,"lon":2}"# + "\n" }.joined()
        var bytes = try gzip(text)
        if damage == "crc" {
            bytes[bytes.count - 8] ^= 0x5A  // the member's CRC-32 trailer
        } else {
            bytes.removeLast(bytes.count / 3)
        }
        let path = try file("damaged.ndjson.gz", bytes)
        let read = try items(path)
        let readings = read.compactMap { try? $0.get() }
        let errors = read.compactMap { item -> InputError? in
            if case .failure(let error) = item { return error }
            return nil
        }
        #expect(errors.count == 1, "one error, for the damage: \(errors.map(\.description))")
        #expect(errors.first?.message.contains("gzip") == true)
        #expect(errors.first?.line == readings.count + 1)
        if damage == "crc" {
            #expect(readings.count == lines)
        } else {
            #expect(readings.count > lines / 5 && readings.count < lines)
        }
        #expect(readings.map { $0.time?.seconds } == (0..<readings.count).map { Double($0 + 1) })
        // The run pipeline, in blocks, keeps the same readings.
        let pipeline = RunPipeline(
            catalog: Catalog(), catalogDecoder: CatalogDecoder(), options: RunPipeline.Options(),
            encoder: EventFormat.ndjson.makeEncoder(), logger: Logger(label: "test"))
        var reports: [String] = []
        let summary = try pipeline.run(inputs: [path], write: { _ in }, report: { reports.append($0) })
        #expect(summary.readings == readings.count)
        #expect(summary.skipped == 1, "\(reports)")
    }

    /// A GPX file's points come in time order whatever their document order, its bad points after
    /// them, and the device is the track's name unless overridden.
    @Test func gpxPointsComeInTimeOrderWithBadPointsLast() throws {
        let gpx = """
            <?xml version="1.0"?>
            <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>bike</name><trkseg>
            <trkpt lat="1" lon="2"><time>2026-03-02T08:00:20Z</time></trkpt>
            <trkpt lat="1" lon="2"></trkpt>
            <trkpt lat="1" lon="3"><time>2026-03-02T08:00:10Z</time></trkpt>
            </trkseg></trk>
            </gpx>
            """
        let path = try file("ride.gpx", Array(gpx.utf8))
        let read = try items(path)
        #expect(read.count == 3)
        guard case .success(.fix(let early)) = read[0], case .success(.fix(let late)) = read[1],
            case .failure(let error) = read[2]
        else {
            Issue.record("expected two fixes then an error, got \(read)")
            return
        }
        #expect(early.time < late.time)
        #expect(early.device == "bike")
        #expect(error.line == 5)
        #expect(error.field == "time")
        guard case .success(.fix(let renamed)) = try items(path, device: "car")[0] else { return }
        #expect(renamed.device == "car")
    }

    @Test func fileDevicesDropDirectoriesAndExtensions() {
        #expect(ReadingSource.fileDevice("/data/logs/bt451.log") == "bt451")
        #expect(ReadingSource.fileDevice("drive.nmea.gz") == "drive")
        #expect(ReadingSource.fileDevice(".hidden") == ".hidden")
        #expect(ReadingSource.fileDevice("-") == "stdin")
    }
}
