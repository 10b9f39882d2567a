import Fenceline
import FencelineFormats
import Foundation
import Logging
import TestSupport
import Testing

@testable import FencelineRun

/// `--threads N` shards devices across engines; its output must be byte for byte the one-thread output.
@Suite struct ShardedRunTests {
    /// Regions of every kind, beacons, timers and calendar rules (some for named devices only), so
    /// every merge path is exercised.
    static let catalog = """
        {"categories": [
          {"id": "arrival", "options": ["customDismissAction"], "actions": [
            {"id": "ack", "title": "OK", "options": ["foreground"]},
            {"id": "reply", "title": "Reply", "textInput": {"button": "Send", "placeholder": "…"}}]},
          {"id": "plain", "actions": [{"id": "ack", "title": "OK"}]}],
         "requests": [
          {"id": "gate", "content": {"title": "Gate", "category": "arrival"},
            "trigger": {"type": "region", "center": {"lat": 52.37, "lon": 4.89}, "radius": 150,
            "notifyOnDwell": true, "dwell": 20}},
          {"id": "naive", "content": {"category": "plain"},
            "trigger": {"type": "region", "center": {"lat": 52.371, "lon": 4.892}, "radius": 120,
            "hysteresis": "naive"}},
          {"id": "delayed", "trigger": {"type": "region", "center": {"lat": 52.369, "lon": 4.888}, "radius": 200,
            "hysteresis": {"enterDelay": 5, "exitDelay": 8}}},
          {"id": "block", "trigger": {"type": "region", "geometry": {"type": "Polygon", "coordinates":
            [[[4.886, 52.368], [4.894, 52.368], [4.894, 52.372], [4.886, 52.372], [4.886, 52.368]],
             [[4.889, 52.3695], [4.891, 52.3695], [4.891, 52.3705], [4.889, 52.3705], [4.889, 52.3695]]]}}},
          {"id": "line", "trigger": {"type": "region", "geometry": {"type": "LineString", "coordinates":
            [[4.880, 52.370], [4.900, 52.370]]}, "notifyOnCross": true}},
          {"id": "post", "trigger": {"type": "region", "center": {"lat": 52.3702, "lon": 4.8903}, "radius": 12,
            "hysteresis": "naive", "notifyOnCross": true}},
          {"id": "only-d3", "devices": ["d3"], "trigger": {"type": "region", "center": {"lat": 52.37, "lon": 4.89},
            "radius": 300}},
          {"id": "dock", "trigger": {"type": "beacon", "uuid": "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", "major": 1}},
          {"id": "ping", "trigger": {"type": "timeInterval", "seconds": 60, "repeats": true}},
          {"id": "once", "trigger": {"type": "timeInterval", "seconds": 95}},
          {"id": "minute", "trigger": {"type": "calendar", "timeZone": "Europe/Amsterdam",
            "dateComponents": {"second": 30}, "repeats": true}},
          {"id": "shift", "devices": ["d1", "d5-fleet-unit-77", "d6-fleet-unit-0777", "d7-é-unit", "nobody"],
            "content": {"category": "plain"}, "trigger": {"type": "timeInterval", "seconds": 60, "repeats": true}},
          {"id": "bell", "devices": ["d2", "d9-fleet-unit-77"], "trigger": {"type": "calendar",
            "timeZone": "Europe/Amsterdam", "dateComponents": {"second": 45}, "repeats": true}}
        ]}
        """

    /// Many devices walking across the fences, interleaved by time (some lagging behind the clock),
    /// with beacon sightings, control records (timed, untimed, old), stale readings and bad lines
    /// scattered through.
    static func readings(seed: UInt64) -> String {
        var generator = SplitMix(state: seed)
        // Names up to 16 bytes and longer: on canonical lines a shard reads those two kinds from
        // different places. The non-ASCII ones are never canonical and take the general parse.
        let devices = (0..<23).map { index in
            "d\(index)"
                + (index < 4 ? "" : ["-fleet-unit-7", "-fleet-unit-77", "-fleet-unit-0777", "-é-unit"][index % 4])
        }
        var positions = devices.map { _ in
            (Double.random(in: -400...400, using: &generator), Double.random(in: -400...400, using: &generator))
        }
        var lines: [String] = []
        let start = Int(Fixtures.t0.seconds)
        // The devices the catalog's "shift" and the added "late-shift" time requests name.
        let shift = ["d1", "d5-fleet-unit-77", "d6-fleet-unit-0777", "d7-é-unit", "nobody"]
        let lateShift = ["d2", "d5-fleet-unit-77", "d9-fleet-unit-77"]
        for second in 0..<240 {
            for (index, device) in devices.enumerated() where Bool.random(using: &generator) {
                positions[index].0 += Double.random(in: -40...40, using: &generator)
                positions[index].1 += Double.random(in: -40...40, using: &generator)
                positions[index].0 = max(-500, min(500, positions[index].0))
                positions[index].1 = max(-500, min(500, positions[index].1))
                let point = Fixtures.offset(east: positions[index].0, north: positions[index].1)
                let accuracy = Int.random(in: 3...25, using: &generator)
                // The first devices report through a slow link, a few seconds behind the others:
                // in order for each device, but older than the clock when they arrive.
                let lag = index < 4 ? index + 1 : 0
                // Even seconds in the canonical layout (RFC 3339 time), which a parse worker keeps
                // as plain values; odd ones with epoch seconds, which go through the general parse.
                let time =
                    second % 2 == 0
                    ? "\"\(Timestamp(microseconds: Int64(start + second - lag) * 1_000_000).rfc3339)\""
                    : "\(start + second - lag)"
                lines.append(
                    #"{"device":"\#(device)","time":\#(time),"lat":\#(point.latitude),"lon":\#(point.longitude),"accuracy":\#(accuracy)}"#
                )
                // Ticks between readings of one second, without a time or at the clock: each
                // closes the instant there, and the readings after it open it again.
                if index == 10 && second % 11 == 4 { lines.append(#"{"op":"tick"}"#) }
                if index == 15 && second % 17 == 8 { lines.append(#"{"time":\#(start + second),"op":"tick"}"#) }
            }
            if second % 7 == 3 {
                let device = devices[Int.random(in: 0..<devices.count, using: &generator)]
                let rssi = Int.random(in: -90 ... -50, using: &generator)
                lines.append(
                    #"{"device":"\#(device)","time":\#(start + second),"beacon":{"uuid":"2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6","major":1,"minor":2,"rssi":\#(rssi)}}"#
                )
            }
            if second % 13 == 5 {
                // Answers to notifications, valid or not, by seq or by request and device: each
                // is applied (or refused) where one engine applies it, whatever the sharding.
                let action = ["default", "ack", "reply", "dismiss", "nope"][Int.random(in: 0..<5, using: &generator)]
                let text = action == "reply" || second % 3 == 0 ? #","text":"on my way""# : ""
                let time = second % 4 == 1 ? "" : #""time":\#(start + second),"#
                if second % 2 == 0 {
                    let seq = Int.random(in: 1...max(1, second * 2), using: &generator)
                    lines.append(#"{\#(time)"op":"respond","seq":\#(seq),"action":"\#(action)"\#(text)}"#)
                } else {
                    let request = ["gate", "naive", "shift", "late-shift"][second / 2 % 4]
                    let names = request == "shift" ? shift : request == "late-shift" ? lateShift : devices
                    let device = names[Int.random(in: 0..<names.count, using: &generator)]
                    lines.append(
                        #"{\#(time)"op":"respond","request":"\#(request)","device":"\#(device)","action":"\#(action)"\#(text)}"#
                    )
                }
            }
            if second % 60 == 2 && second > 60 {
                // Each device the time request names, answered by request and device just after a
                // firing: one engine's delivered limit, forgetting and time to live decide.
                for device in shift {
                    lines.append(#"{"op":"respond","request":"shift","device":"\#(device)","action":"default"}"#)
                }
            }
            switch second {
            case 30:
                lines.append(
                    #"{"time":\#(start + second),"op":"add","request":{"id":"late","trigger":{"type":"region","center":{"lat":52.3705,"lon":4.8905},"radius":90}}}"#
                )
            case 50: lines.append(#"{"op":"removePending","ids":["once"]}"#)
            case 61: lines.append(#"{"device":"d1","time":\#(start),"lat":52.37,"lon":4.89}"#)  // stale
            case 70: lines.append(#"{"time":\#(start + 10),"op":"removeDelivered","ids":["gate"]}"#)  // old
            case 90: lines.append("{not json")
            case 100: lines.append(#"{"time":\#(start + second),"op":"add","request":{"id":"bad","trigger":{}}}"#)
            case 101:
                // A time request for devices of several shards added mid-run: each shard schedules it.
                lines.append(
                    #"{"time":\#(start + second),"op":"add","request":{"id":"late-shift","devices":["d2","d5-fleet-unit-77","d9-fleet-unit-77"],"trigger":{"type":"timeInterval","seconds":60,"repeats":true}}}"#
                )
            case 120: lines.append(#"{"op":"removeAllDelivered"}"#)
            case 140:
                // Devices with time notifications (and one never seen): every shard forgets them.
                lines.append(#"{"op":"removeDevice","devices":["d1","d6-fleet-unit-0777","nobody"]}"#)
            case 150: lines.append(#"{"time":\#(start + second + 30),"op":"tick"}"#)
            case 170:
                // A time trigger taking the id of a region request: no shard may keep the region.
                lines.append(
                    #"{"time":\#(start + second),"op":"add","request":{"id":"naive","trigger":{"type":"timeInterval","seconds":7}}}"#
                )
            case 200: lines.append(#"{"op":"removeAllPending"}"#)
            default: break
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The readings for `seed` in a temporary file.
    static func file(seed: UInt64) throws -> String {
        let directory = Scratch.root.appendingPathComponent(
            "fenceline-sharded-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("readings.ndjson").path
        try Data(readings(seed: seed).utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A run of `path` with `threads` threads; with one, line by line unless `serialBlockSize`
    /// asks for the two-pass blocks of a file (the reference the sharded runs are held to is
    /// the plain line by line one).
    static func run(
        threads: Int, path: String, reorderWindow: Double = 0, until: Timestamp? = nil, blockSize: Int = 4 << 20,
        serialBlockSize: Int? = nil, strict: Bool = false, then others: [String] = [], piecesPerThread: Int? = nil,
        deliveredLimit: Int = 64, deviceTTL: TimeSpan? = nil, encoder: any EventEncoder = NDJSONEventEncoder()
    ) throws -> (
        output: String, reports: [String], summary: String
    ) {
        let decoder = CatalogDecoder()
        let catalog = try decoder.decode(Array(catalog.utf8)).catalog
        var options = RunPipeline.Options()
        options.threads = threads
        options.reorderWindow = TimeSpan(seconds: reorderWindow)
        options.until = until
        options.readBlockSize = blockSize
        options.serialBlockSize = serialBlockSize
        options.strict = strict
        options.deliveredLimit = deliveredLimit
        options.deviceTTL = deviceTTL
        if let piecesPerThread { options.piecesPerThread = piecesPerThread }
        let pipeline = RunPipeline(
            catalog: catalog, catalogDecoder: decoder, options: options, encoder: encoder,
            logger: Logger(label: "test"))
        var output: [UInt8] = []
        var reports: [String] = []
        let summary = try pipeline.run(
            inputs: [path] + others, write: { output += $0 }, report: { reports.append($0) })
        return (String(decoding: output, as: UTF8.self), reports, summary.line)
    }

    /// `perform` runs every item once, on no more threads than asked for (four shards per thread
    /// are more items than threads; run as one `concurrentPerform` item each, they took a thread
    /// per core).
    @Test(arguments: [1, 2])
    func workRunsOnTheThreadsAskedFor(threads: Int) {
        final class Seen: @unchecked Sendable {
            let lock = NSLock()
            var threads = Set<UInt>()
            var items: [Int] = []
        }
        let seen = Seen()
        ShardedRun.perform(64, threads: threads) { item in
            usleep(200)
            seen.lock.withLock {
                seen.threads.insert(UInt(pthread_self()))
                seen.items.append(item)
            }
        }
        #expect(seen.items.sorted() == Array(0..<64))
        #expect(seen.threads.count <= threads, "\(seen.threads.count) threads")
    }

    @Test(arguments: [2, 3, 8])
    func fleetIdsSpreadEvenlyOverShards(threads: Int) {
        // Ids sharing a long prefix and differing in their last digits, as fleets name devices.
        var counts = [Int](repeating: 0, count: threads)
        for number in 0..<4000 { counts[ShardedRun.shard(of: "dev-\(number)", count: threads)] += 1 }
        let fair = 4000 / threads
        #expect(counts.allSatisfy { abs($0 - fair) < fair / 5 }, "\(counts)")
    }

    /// Two spellings of one name with different bytes are two devices; their events of one
    /// instant come out in the same order (by the names' bytes) with any number of threads.
    @Test(arguments: [2, 3, 8])
    func namesSpelledWithOtherBytesAreOrderedByTheirBytes(threads: Int) throws {
        let start = Int(Fixtures.t0.seconds)
        var lines: [String] = []
        for second in 0..<40 {
            let east = second < 20 ? 400.0 : 0
            let point = Fixtures.offset(east: east, north: 0)
            for device in ["caf\u{E9}", "cafe\u{301}", "d1"] {
                lines.append(
                    #"{"device":"\#(device)","time":\#(start + second),"lat":\#(point.latitude),"lon":\#(point.longitude)}"#
                )
            }
        }
        let directory = Scratch.root.appendingPathComponent(
            "sharded-names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("readings.ndjson").path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let single = try Self.run(threads: 1, path: path)
        let sharded = try Self.run(threads: threads, path: path)
        #expect(Array(sharded.output.utf8) == Array(single.output.utf8))
        // Both spellings entered, each its own device, the combining one (smaller bytes) first.
        let enters = single.output.split(separator: "\n").filter {
            $0.contains(#""request":"gate""#) && $0.contains(#""event":"enter""#)
        }
        #expect(enters.count == 3)
        #expect(enters.first.map { Array($0.utf8).contains(0xCC) } == true)  // U+0301 is CC 81
    }

    /// Each batch's events are encoded on a thread of their own while the next batch runs: in
    /// every format (GeoJSON's separators depend on the events before) the bytes are the ones
    /// one thread writes; small blocks, so many batches pass through the encoding thread.
    @Test(arguments: [2, 3])
    func eventsEncodedBesideTheRunAreWrittenAsOneThreadWritesThem(threads: Int) throws {
        let path = try Self.file(seed: 1)
        let encoders: [() -> any EventEncoder] = [
            { NDJSONEventEncoder() }, { TextEventEncoder() }, { APNsEventEncoder() }, { GeoJSONEventEncoder() },
        ]
        for makeEncoder in encoders {
            let single = try Self.run(threads: 1, path: path, encoder: makeEncoder())
            let sharded = try Self.run(
                threads: threads, path: path, blockSize: 4096, encoder: makeEncoder())
            #expect(Array(sharded.output.utf8) == Array(single.output.utf8), "\(type(of: makeEncoder()))")
            #expect(single.output.split(separator: "\n").count > 100)
        }
    }

    @Test(arguments: [2, 3, 8])
    func shardedOutputEqualsOneThread(threads: Int) throws {
        for seed: UInt64 in [1, 2] {
            let path = try Self.file(seed: seed)
            let single = try Self.run(threads: 1, path: path)
            let sharded = try Self.run(threads: threads, path: path)
            #expect(Array(sharded.output.utf8) == Array(single.output.utf8))
            #expect(sharded.reports == single.reports)
            #expect(sharded.summary == single.summary)
            // The workload is rich enough to mean something: every kind of event shows up.
            for kind in ["enter", "exit", "dwell", "cross"] {
                #expect(single.output.contains(#""event":"\#(kind)""#), "no \(kind)")
            }
            for kind in ["timeInterval", "calendar", "beacon"] {
                #expect(single.output.contains(#""trigger":"\#(kind)""#), "no \(kind)")
            }
            #expect(single.output.contains(#""request":"late""#))
            #expect(single.output.contains(#""request":"dock""#))
            // Responses taken and refused.
            #expect(single.output.contains(#""event":"response""#))
            #expect(single.reports.filter { $0.contains("\"action\"") || $0.contains("delivered") }.count > 2)
        }
    }

    /// With a delivered limit of two and devices forgotten after 5 s of silence: an answer by
    /// request and device finds (or misses) what one engine's list holds, time notifications of
    /// devices scoped by name included, which each device's own shard delivers and forgets.
    @Test(arguments: [2, 3])
    func shardedOutputEqualsOneThreadWithASmallLimitAndATimeToLive(threads: Int) throws {
        var answered = false
        for seed: UInt64 in [1, 3] {
            let path = try Self.file(seed: seed)
            let ttl = TimeSpan(seconds: 5)
            let single = try Self.run(threads: 1, path: path, deliveredLimit: 2, deviceTTL: ttl)
            let sharded = try Self.run(threads: threads, path: path, deliveredLimit: 2, deviceTTL: ttl)
            #expect(Array(sharded.output.utf8) == Array(single.output.utf8))
            #expect(sharded.reports == single.reports)
            #expect(sharded.summary == single.summary)
            #expect(single.output.contains(#""reason":"expired""#))
            #expect(single.output.contains(#""request":"late-shift""#))
            answered = answered || single.output.contains(#""event":"response""#)
        }
        #expect(answered)
    }

    /// From a pipe, each block is applied (and its events written) before the next is read; from
    /// a file, each is parsed while the shards apply the one before. Both write what one thread
    /// writes: small blocks, names long and short (those over 16 bytes are kept apart from the
    /// block, which holds the next block's bytes by the time the shards read them).
    @Test func pipesAndFilesWriteTheSame() throws {
        let path = try Self.file(seed: 5)
        let single = try Self.run(threads: 1, path: path)
        let fromFile = try Self.run(threads: 2, path: path, blockSize: 2048)
        #expect(Array(fromFile.output.utf8) == Array(single.output.utf8))
        let fifo = path + ".fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let feeder = Thread {
            guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
            handle.write(bytes)
            try? handle.close()
        }
        feeder.start()
        let fromPipe = try Self.run(threads: 2, path: fifo, blockSize: 2048)
        #expect(Array(fromPipe.output.utf8) == Array(single.output.utf8))
        #expect(fromPipe.reports.map { $0.replacingOccurrences(of: ".fifo:", with: ":") } == single.reports)
        #expect(single.output.contains(#""device":"d6-fleet-unit-0777""#))  // 18 bytes
    }

    /// However many engines and parse shares each thread takes (the threads pick them up as they
    /// come free), the output is the one-thread output: small blocks, so the shares of a block
    /// hold a few lines each, some none.
    @Test(arguments: [1, 3, 4, 16])
    func anyNumberOfPiecesPerThreadWritesTheSame(pieces: Int) throws {
        let path = try Self.file(seed: 3)
        let single = try Self.run(threads: 1, path: path)
        for threads in [2, 3] {
            let sharded = try Self.run(threads: threads, path: path, blockSize: 2048, piecesPerThread: pieces)
            #expect(Array(sharded.output.utf8) == Array(single.output.utf8), "\(threads) threads")
            #expect(sharded.reports == single.reports)
            #expect(sharded.summary == single.summary)
        }
        #expect(single.output.split(separator: "\n").count > 100)
    }

    /// Batches of one line each, where devices lagging behind the clock enter a fence before any
    /// line of their batch moves the clock: each enter leaves at its own line, as with one
    /// engine, so the earlier line's enter comes first though its time is later. The coordinator
    /// keeps the clock's last value from batch to batch for that (resolved against later lines
    /// only, both would leave at the next clock move, in time order).
    @Test func laggingEntersAtTheStartOfABatchLeaveAtTheirOwnLines() throws {
        func line(_ device: String, _ seconds: Int, _ latitude: Double) -> String {
            let time = Fixtures.at(Double(seconds)).rfc3339
            return #"{"device":"\#(device)","time":"\#(time)","lat":\#(latitude),"lon":4.892,"accuracy":5}"#
        }
        // 52.38 is a kilometre north of every fence; 52.371 is inside "naive" and "block".
        let lines = [
            line("a", 90, 52.38), line("d", 90, 52.38), line("lead", 100, 52.38),
            line("a", 98, 52.371), line("d", 95, 52.371), line("lead", 101, 52.38),
        ]
        let path = try Self.file(seed: 1)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let single = try Self.run(threads: 1, path: path)
        let sharded = try Self.run(threads: 2, path: path, blockSize: lines[0].utf8.count * 3 / 2)
        #expect(Array(sharded.output.utf8) == Array(single.output.utf8))
        let enters = single.output.split(separator: "\n").filter {
            $0.contains(#""request":"naive""#) && $0.contains(#""event":"enter""#)
        }
        #expect(enters.count == 2)
        #expect(enters.first?.contains(#""device":"a""#) == true)
    }

    /// The readings of seed 4 with CRLF, blank and bad lines scattered through, a line over the
    /// 16 MiB limit in the middle and no newline after the last; returns its path and lines.
    /// The file, its lines, and the number of the line over 16 MiB.
    static func hostileFile() throws -> (path: String, lines: [String], long: Int) {
        var lines = Self.readings(seed: 4).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.removeLast().isEmpty)
        for index in stride(from: lines.count - 1, to: 0, by: -1) {
            switch index % 97 {
            case 5: lines[index] += "\r"
            case 11: lines.insert("", at: index)
            case 17: lines.insert("   ", at: index)
            case 23: lines.insert(#"{"device":"d3","time":"later","lat":1,"lon":2}"#, at: index)
            default: break
            }
        }
        // Responses are left out: their refusals would fill the reports shown.
        lines.removeAll { $0.contains(#""op":"respond""#) }
        let long = lines.count / 2
        lines.insert(String(repeating: "x", count: 17 << 20), at: long)
        let path = try Self.file(seed: 4)
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        return (path, lines, long + 1)
    }

    /// Blocks far smaller than the file, split into a share per thread at line ends: CRLF and
    /// blank lines, a line over the 16 MiB limit and a last line without a newline are read, and
    /// bad lines reported with their numbers, exactly as with one thread.
    @Test(arguments: [(3, 700), (2, 4096), (4, 1 << 16)])
    func shardedBlocksReadEveryLineAsOneThreadDoes(threads: Int, blockSize: Int) throws {
        let (path, _, long) = try Self.hostileFile()
        let single = try Self.run(threads: 1, path: path)
        let sharded = try Self.run(threads: threads, path: path, blockSize: blockSize)
        #expect(Array(sharded.output.utf8) == Array(single.output.utf8))
        #expect(sharded.reports == single.reports)
        #expect(sharded.summary == single.summary)
        #expect(single.reports.contains { $0.hasSuffix(":\(long): line longer than 16 MiB") })
        #expect(single.reports.count > 4)
        #expect(single.output.split(separator: "\n").count > 100)
    }

    /// CSV read in blocks (the header first, then rows parsed in parallel shares, or in one pass
    /// with one thread) gives the events, reports and summary of line by line: blank lines before
    /// the header, quoted and non-ASCII names, Unix times, empty and bad fields.
    @Test(arguments: [(2, 700), (3, 4096), (1, 700), (1, 1 << 16)])
    func csvBlocksReadEveryRowAsLineByLine(threads: Int, blockSize: Int) throws {
        var rows = ["", "device,time,lat,lon,accuracy"]
        for (index, line) in Self.readings(seed: 9).split(separator: "\n").enumerated() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let device = object["device"] as? String, let lat = object["lat"] as? Double,
                let lon = object["lon"] as? Double
            else { continue }
            let time = (object["time"] as? String) ?? "\(object["time"] as? Int ?? 0)"
            let accuracy = index % 11 == 0 ? "" : "\(object["accuracy"] as? Int ?? 5)"
            let name = index % 13 == 0 ? "\"\(device)\"" : device
            rows.append("\(name),\(time),\(lat),\(lon),\(accuracy)")
            if index % 97 == 5 { rows.append("\(device),soon,\(lat),\(lon),") }
            if index % 101 == 7 { rows.append("\(device),\(time),\(lat)") }
        }
        let directory = Scratch.root.appendingPathComponent(
            "fenceline-csv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("readings.csv").path
        try Data((rows.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let single = try Self.run(threads: 1, path: path)
        let blocks =
            threads == 1
            ? try Self.run(threads: 1, path: path, serialBlockSize: blockSize)
            : try Self.run(threads: threads, path: path, blockSize: blockSize)
        #expect(Array(blocks.output.utf8) == Array(single.output.utf8))
        #expect(blocks.reports == single.reports)
        #expect(blocks.summary == single.summary)
        #expect(single.reports.count > 4 && single.reports.contains { $0.contains("\"time\"") })
        #expect(single.output.split(separator: "\n").count > 100)
    }

    /// One thread reading a file in blocks, each parsed in one pass before the engine applies it,
    /// reads, applies and reports every line as line by line does: blocks that cut the file
    /// every few lines, at 4 KiB, 64 KiB and the default size.
    @Test(arguments: [700, 4096, 1 << 16, RunPipeline.Options().serialBlockSize ?? 0])
    func oneThreadBlocksReadEveryLineAsLineByLine(blockSize: Int) throws {
        #expect(blockSize > 0)
        let (path, _, long) = try Self.hostileFile()
        let single = try Self.run(threads: 1, path: path)
        let blocks = try Self.run(threads: 1, path: path, serialBlockSize: blockSize)
        #expect(Array(blocks.output.utf8) == Array(single.output.utf8))
        #expect(blocks.reports == single.reports)
        #expect(blocks.summary == single.summary)
        #expect(blocks.reports.contains { $0.hasSuffix(":\(long): line longer than 16 MiB") })
        #expect(blocks.reports.contains { $0.contains("time") })
        #expect(single.output.split(separator: "\n").count > 100)
    }

    /// Under `--strict`, a block's first pass has parsed the lines after the bad one, but the run
    /// stops at it all the same: the same events, report and summary as line by line.
    @Test func oneThreadBlocksStopAtTheFirstBadLineUnderStrict() throws {
        let path = try Self.file(seed: 5)
        let lines = Self.readings(seed: 5).split(separator: "\n").map(String.init)
        let bad = try #require(lines.firstIndex { $0.contains(#""op":"respond""#) || $0 == "{not json" })
        let single = try Self.run(threads: 1, path: path, strict: true)
        let blocks = try Self.run(threads: 1, path: path, serialBlockSize: 4096, strict: true)
        #expect(Array(blocks.output.utf8) == Array(single.output.utf8))
        #expect(blocks.reports == single.reports)
        #expect(blocks.summary == single.summary)
        #expect(single.reports.first?.contains(":\(bad + 1):") == true)
        let whole = try Self.run(threads: 1, path: path, serialBlockSize: 4096)
        #expect(whole.output.count > blocks.output.count)
    }

    @Test(arguments: [4 << 20, 2048])
    func shardedOutputEqualsOneThreadWithAReorderWindowAndUntil(blockSize: Int) throws {
        let until = Fixtures.at(600)
        let path = try Self.file(seed: 3)
        let single = try Self.run(threads: 1, path: path, reorderWindow: 4, until: until)
        let sharded = try Self.run(threads: 4, path: path, reorderWindow: 4, until: until, blockSize: blockSize)
        #expect(Array(sharded.output.utf8) == Array(single.output.utf8))
        #expect(sharded.summary == single.summary)
        #expect(single.output.split(separator: "\n").count > 100)
    }

    /// A request re-added (untimed, mid-instant) moves its older delivered entries to the top; a
    /// device entering and leaving a fence in that instant has its exit numbered before its enter
    /// (exits first, SPEC §4), and an answer naming that request and device answers the enter, the
    /// latest delivered, with one engine and with shards alike ("d", whose entry is moved, and
    /// "f" are on other shards).
    @Test(arguments: [1, 2, 3])
    func anAnswerByRequestAndDeviceAfterAReAddAnswersTheLatestSeq(threads: Int) throws {
        func line(_ device: String, _ seconds: Int, _ latitude: Double) -> String {
            let time = Fixtures.at(Double(seconds)).rfc3339
            return #"{"device":"\#(device)","time":"\#(time)","lat":\#(latitude),"lon":4.892}"#
        }
        let add =
            #"{"op":"add","request":{"id":"late","content":{"category":"plain"},"#
            + #""trigger":{"type":"region","center":{"lat":52.371,"lon":4.892},"radius":120,"hysteresis":"naive"}}}"#
        // 52.371 is inside "naive" and "late"; 52.38 is a kilometre north of every fence.
        let lines = [
            add, line("d", 0, 52.371), line("f", 20, 52.38), line("d", 65, 52.38), line("f", 90, 52.371), add,
            line("f", 90, 52.38), line("c", 100, 52.38),
            #"{"op":"respond","request":"naive","device":"f","action":"ack"}"#,
        ]
        let path = try Self.file(seed: 1)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let single = try Self.run(threads: 1, path: path)
        let run = try Self.run(threads: threads, path: path)
        #expect(Array(run.output.utf8) == Array(single.output.utf8))
        let events = try run.output.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let naiveOfF = events.filter { $0["request"] as? String == "naive" && $0["device"] as? String == "f" }
        let enter = try #require(naiveOfF.first { $0["event"] as? String == "enter" }?["seq"] as? Int)
        let exit = try #require(naiveOfF.first { $0["event"] as? String == "exit" }?["seq"] as? Int)
        #expect(exit < enter)
        #expect(naiveOfF.last?["event"] as? String == "response")
        #expect(naiveOfF.last?["respondsTo"] as? Int == enter)
    }

    /// An answer before the first reading is refused at once by one engine and by shards alike:
    /// under `--strict` neither writes anything.
    @Test(arguments: [1, 2, 3])
    func anAnswerBeforeTheFirstReadingIsRefusedAtOnce(threads: Int) throws {
        let path = try Self.file(seed: 6)
        let lines = try String(contentsOfFile: path, encoding: .utf8)
        try Data((#"{"op":"respond","seq":1,"action":"default"}"# + "\n" + lines).utf8)
            .write(to: URL(fileURLWithPath: path))
        let strict = try Self.run(threads: threads, path: path, strict: true)
        #expect(strict.output.isEmpty)
        #expect(strict.reports.first?.hasSuffix(#":1: field "seq": no notification has been delivered yet"#) == true)
        let single = try Self.run(threads: 1, path: path)
        let sharded = try Self.run(threads: threads, path: path)
        #expect(Array(sharded.output.utf8) == Array(single.output.utf8))
        #expect(sharded.reports == single.reports)
    }

    /// Under `--strict` the sharded run stops at the first bad line too, mid-block, with the lines
    /// before it applied (the block routed so far is applied before the run ends).
    @Test(arguments: [2, 3])
    func shardedRunsStopAtTheFirstBadLineUnderStrict(threads: Int) throws {
        let path = try Self.file(seed: 5)
        let single = try Self.run(threads: 1, path: path, strict: true)
        let sharded = try Self.run(threads: threads, path: path, blockSize: 2048, strict: true)
        #expect(Array(sharded.output.utf8) == Array(single.output.utf8))
        #expect(sharded.reports == single.reports)
        #expect(sharded.summary == single.summary)
        #expect(single.output.split(separator: "\n").count > 2)
        let whole = try Self.run(threads: threads, path: path, blockSize: 2048)
        #expect(whole.output.count > sharded.output.count)
    }

    /// Inputs of two formats in one run, NDJSON then CSV: the NDJSON file's last block is applied
    /// before the CSV rows are routed, as one engine would have them.
    @Test(arguments: [2, 3])
    func anNDJSONFileThenACSVFileWriteWhatOneThreadWrites(threads: Int) throws {
        let start = Int(Fixtures.t0.seconds)
        let devices = ["d1", "d2", "d3", "d4-fleet-unit-0777", "d5-fleet-unit-0777", "d6"]
        var lines: [String] = []
        var rows = ["device,time,lat,lon"]
        for second in 0..<120 {
            // Across the fences at the centre, east then back west.
            let east = Double(second < 60 ? second * 15 - 450 : 1350 - second * 15)
            for (index, device) in devices.enumerated() {
                let point = Fixtures.offset(east: east, north: Double(index * 20 - 50))
                if second < 60 {
                    lines.append(
                        #"{"device":"\#(device)","time":\#(start + second),"lat":\#(point.latitude),"lon":\#(point.longitude)}"#
                    )
                } else if index % 2 == 0 {
                    rows.append("\(device),\(start + second),\(point.latitude),\(point.longitude)")
                }
            }
        }
        let path = try Self.file(seed: 6)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let csv = path + ".csv"
        try Data((rows.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: csv))
        let single = try Self.run(threads: 1, path: path, then: [csv])
        let sharded = try Self.run(threads: threads, path: path, blockSize: 2048, then: [csv])
        #expect(Array(sharded.output.utf8) == Array(single.output.utf8))
        #expect(sharded.reports == single.reports)
        #expect(sharded.summary == single.summary)
        // Events from both files: enters on the way east, exits of the CSV's devices on the way back.
        let events = single.output.split(separator: "\n")
        #expect(events.contains { $0.contains(#""device":"d4-fleet-unit-0777""#) && $0.contains(#""event":"enter""#) })
        #expect(events.contains { $0.contains(#""device":"d5-fleet-unit-0777""#) && $0.contains(#""event":"exit""#) })
        #expect(single.reports.isEmpty)
    }
}
