import Fenceline
import FencelineFormats
import FencelineRun
import Foundation
import Logging
import TestSupport
import Testing

/// The whole run in memory: bad lines, --strict, several files, CSV, missing files, odd line endings.
@Suite struct RunPipelineTests {
    static let catalog = Catalog(requests: [Fixtures.circle(hysteresis: .naive)])

    /// A temporary file holding `text`.
    func file(_ name: String, _ text: String) throws -> String {
        let directory = Scratch.root.appendingPathComponent(
            "fenceline-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func line(_ seconds: Int, east: Double, device: String = "d1") -> String {
        let point = Fixtures.offset(east: east)
        return
            #"{"device":"\#(device)","time":\#(Int(Fixtures.t0.seconds) + seconds),"lat":\#(point.latitude),"lon":\#(point.longitude)}"#
    }

    func run(_ inputs: [String], strict: Bool = false, maximumReported: Int = 20) throws -> (
        events: [String], reports: [String], summary: RunPipeline.Summary
    ) {
        var options = RunPipeline.Options()
        options.strict = strict
        options.maximumReported = maximumReported
        let pipeline = RunPipeline(
            catalog: Self.catalog, catalogDecoder: CatalogDecoder(), options: options, encoder: NDJSONEventEncoder(),
            logger: Logger(label: "test"))
        var output: [UInt8] = []
        var reports: [String] = []
        let summary = try pipeline.run(inputs: inputs, write: { output += $0 }, report: { reports.append($0) })
        let events = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        return (events, reports, summary)
    }

    /// `render` and `explain` keep every event in memory, so their pipelines stop at a limit: a
    /// far --until over a repeating timer writes the limit's events and says it stopped.
    @Test func aRunStopsAtItsEventLimit() throws {
        var options = RunPipeline.Options()
        options.until = Timestamp(rfc3339: "9999-12-31T23:59:59Z")
        let catalog = Catalog(requests: [
            NotificationRequest(
                id: "ping", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 60), repeats: true)))
        ])
        let pipeline = RunPipeline(
            catalog: catalog, catalogDecoder: CatalogDecoder(), options: options, encoder: NDJSONEventEncoder(),
            logger: Logger(label: "test"))
        pipeline.maximumEvents = 1_000
        var output: [UInt8] = []
        let summary = try pipeline.run(
            inputs: [try file("one.ndjson", line(0, east: 0) + "\n")], write: { output += $0 }, report: { _ in })
        #expect(summary.reachedEventLimit)
        #expect(summary.events == 1_000)
        #expect(output.split(separator: UInt8(ascii: "\n")).count == 1_000)
    }

    /// A UTF-8 byte order mark before the first line is not content, in NDJSON and CSV alike.
    @Test func aByteOrderMarkIsNotALine() throws {
        let lines = [line(0, east: 300), line(10, east: 0), line(20, east: 300)].joined(separator: "\n") + "\n"
        let plain = try run([try file("plain.ndjson", lines)])
        let marked = try run([try file("marked.ndjson", "\u{FEFF}" + lines)])
        #expect(marked.reports.isEmpty)
        #expect(marked.events == plain.events && marked.summary.readings == 3)
        let csv = try run([
            try file("marked.csv", "\u{FEFF}device,time,lat,lon\nd1,\(Int(Fixtures.t0.seconds)),52.37,4.89\n")
        ])
        #expect(csv.reports.isEmpty && csv.summary.readings == 1)
    }

    @Test func badLinesAreSkippedReportedAndCounted() throws {
        let path = try file(
            "trace.ndjson",
            [
                line(0, east: 300), "{not json", line(1, east: 0),
                #"{"device":"d1","time":"2026-03-02T08:00:02Z","lat":123,"lon":4}"#, line(2, east: 300),
            ].joined(separator: "\n"))
        let result = try run([path])
        #expect(result.events.count == 2)
        #expect(result.summary.readings == 3)
        #expect(result.summary.skipped == 2)
        #expect(
            result.reports == [
                "\(path):2: malformed JSON at column 2: expected a member name in quotes, found 'n'",
                "\(path):4: field \"lat\": 123.0 is out of range [-90, 90]",
            ])
        #expect(result.summary.line == "fenceline: 3 readings, 2 skipped, 0 stale, 2 events")
    }

    @Test func strictStopsAtTheFirstBadLineKeepingEarlierEvents() throws {
        let path = try file(
            "trace.ndjson",
            [line(0, east: 300), line(1, east: 0), "garbage", line(2, east: 300)].joined(separator: "\n"))
        let result = try run([path], strict: true)
        #expect(result.events.count == 1)
        #expect(result.events.first?.contains(#""event":"enter""#) == true)
        #expect(result.summary.strictFailure?.line == 3)
        #expect(result.summary.readings == 2)
    }

    /// Issue 26, defect 6: `--strict` stopping at a bad NMEA sentence still applies the receiver
    /// epoch before it, which was complete but open (an epoch closes at the next one's time).
    @Test func strictKeepsTheNMEAEpochBeforeTheBadSentence() throws {
        func sentence(_ body: String) -> String {
            let sum = body.utf8.reduce(UInt8(0), ^)
            return "$\(body)*" + String(sum, radix: 16, uppercase: true).leftPadded(to: 2)
        }
        let lines = [
            sentence("GPRMC,080000.00,A,5222.200,N,00453.400,E,0.0,0.0,020326,,,A"),
            sentence("GPRMC,080001.00,A,5222.201,N,00453.401,E,0.0,0.0,020326,,,A"),
            "$GPRMC,080002.00,A,5222.202,N,00453.402,E,0.0,0.0,020326,,,A*00",
        ]
        let path = try file("receiver.nmea", lines.joined(separator: "\n") + "\n")
        let (_, reports, summary) = try run([path], strict: true)
        #expect(summary.strictFailure?.line == 3, "\(reports)")
        #expect(summary.readings == 2)
        var readings = 0
        try ReadingSource(path: path).forEach { item in
            if case .success = item { readings += 1 }
            return (try? item.get()) != nil
        }
        #expect(readings == 2)
    }

    @Test func reportingStopsAtTheLimitThenCounts() throws {
        let path = try file("trace.ndjson", Array(repeating: "x", count: 7).joined(separator: "\n"))
        let result = try run([path], maximumReported: 3)
        #expect(result.reports.count == 4)
        #expect(result.reports.last == "fenceline: 4 more bad lines not shown (--max-errors 3)")
    }

    @Test func filesAreReadInOrderAcrossFormats() throws {
        let first = try file("a.ndjson", line(0, east: 300) + "\r\n" + line(1, east: 0) + "\r\n")
        let point = Fixtures.offset(east: 300)
        let second = try file(
            "b.csv", "time,lat,lon,device\n\"2026-03-02T08:00:05Z\",\(point.latitude),\(point.longitude),d1")
        let result = try run([first, second])
        #expect(result.events.count == 2)
        #expect(
            result.events.last?.contains(
                #""time":"2026-03-02T08:00:05Z","request":"gate","device":"d1","trigger":"region","event":"exit""#)
                == true)
        #expect(result.summary.readings == 3)
    }

    @Test func csvWithoutTheRequiredColumnsIsOneBadLine() throws {
        let path = try file("b.csv", "device,time,latitude\na,1,2")
        let result = try run([path])
        #expect(result.summary.skipped == 1)
        #expect(
            result.reports.first
                == "\(path):1: field \"lon\": the CSV header lacks this column; expected device,time,lat,lon[,accuracy]"
        )
    }

    @Test func missingFilesFailBeforeAnythingIsRead() throws {
        let present = try file("a.ndjson", line(0, east: 0))
        do {
            _ = try run([present, "/nonexistent/trace.ndjson"])
            Issue.record("expected a missing-file error")
        } catch let error as InputError {
            #expect(error.code == .fileMissing)
            #expect(error.description.hasPrefix("/nonexistent/trace.ndjson: cannot open"))
        }
    }

    @Test func linesLongerThanTheLimitAreSkippedNotBuffered() throws {
        let huge = String(repeating: "a", count: 20 << 20)
        let path = try file("big.ndjson", line(0, east: 300) + "\n" + huge + "\n" + line(1, east: 0))
        let result = try run([path])
        #expect(result.summary.skipped == 1)
        #expect(result.reports.first == "\(path):2: line longer than 16 MiB")
        #expect(result.events.count == 1)
    }

    /// A whole file (a catalog) is every byte of it, whatever its size against the 64 KiB the
    /// reader sniffs first and the 1 MiB chunks of the fallback.
    @Test(arguments: [0, 1, 65_535, 65_536, 65_537, 3 << 20])
    func readAllReturnsEveryByte(size: Int) throws {
        let text = String((0..<size).map { Character(UnicodeScalar(UInt8(97 + $0 * 7 % 26))) })
        let path = try file("whole.json", text)
        let reader = try LineReader(path: path)
        #expect(try reader.readAll() == Array(text.utf8))
        #expect(reader.bytesRead == size)
    }

    @Test func lineReaderHandlesChunkBoundariesAndAMissingFinalNewline() throws {
        // Lines of growing length straddle the reader's 1 MiB chunks.
        var lines: [String] = []
        var total = 0
        while total < 3 << 20 {
            let text = String(repeating: "x", count: lines.count * 997 % 70_000)
            lines.append(text)
            total += text.count + 1
        }
        let path = try file("lines.txt", lines.joined(separator: "\n"))
        var seen: [Int] = []
        try LineReader(path: path).forEachLine { line, number in
            #expect(number == seen.count + 1)
            seen.append(line.count)
            return true
        }
        #expect(seen == lines.map(\.count))
    }

    /// Blocks hold whole lines (a `\r` left in place), numbered on from the counts the consumer
    /// returns; lines over the limit go to `oversized` between blocks; the last line may lack its
    /// newline; returning nil stops.
    @Test(arguments: [1, 100, 4096, 1 << 20])
    func blocksHoldWholeLinesInOrder(blockSize: Int) throws {
        var lines: [String] = []
        for index in 0..<3000 {
            var text = String(repeating: "y", count: index * 613 % 900)
            if index % 10 == 3 { text += "\r" }
            lines.append(text)
        }
        lines[1234] = String(repeating: "z", count: 70_000)
        let path = try file("blocks.txt", lines.joined(separator: "\n"))
        let reader = try LineReader(path: path)
        reader.maximumLineLength = 65_536
        var seen: [String] = []
        var oversized: [Int] = []
        try reader.forEachBlock(blockSize: blockSize, oversized: { oversized.append($0) }) { block, first in
            #expect(first == seen.count + oversized.count + 1)
            #expect(block.last == 0x0A || seen.count + oversized.count + block.split(separator: 0x0A).count == 3000)
            let inBlock = block.split(separator: 0x0A, omittingEmptySubsequences: false)
            let found = block.last == 0x0A ? inBlock.dropLast() : inBlock[...]
            seen += found.map { String(decoding: $0, as: UTF8.self) }
            return found.count
        }
        #expect(oversized == [1235])
        var expected = lines
        expected.remove(at: 1234)
        // Compared outside the expectation, which would print both arrays of long lines.
        let same = seen == expected
        #expect(same, "\(seen.count) lines read, \(expected.count) expected")

        var blocks = 0
        try LineReader(path: path).forEachBlock(blockSize: blockSize) { _, _ in
            blocks += 1
            return nil
        }
        #expect(blocks == 1)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
