import AsyncHTTPClient
import Fenceline
import Foundation
import Glibc
import NIOCore
import NIOHTTP1

/// The service figures of issue 27, measured against the real `fenceline serve` on loopback. The
/// batches are posted by wrk (Debian's, with `Tools/bench-posts.lua` sending them in the file's
/// order, which ingest needs: a batch read out of order is mostly stale readings), a client light
/// enough that the figure is the service's on a machine of two cores; the single POSTs, the SSE
/// subscribers and the restart use async-http-client.
struct ServiceBench {
    let fenceline: String
    let catalog: String
    let directory: String
    /// How many times each ingest run is made, with and without subscribers taking turns (so
    /// their ratio compares runs from the same stretch of the machine's changing speed); the
    /// fastest of each is the rate shown.
    var repeats = 1

    struct Figures {
        /// Batches of 1,000 lines, one after another, each answered once durable.
        var batchRate: Double
        /// `fenceline run` over the same readings, its runs taking turns with the ingest runs: the
        /// best ratio of a repeat's ingest to its run, and that run's rate.
        var runRate: Double
        var runRatio: Double
        /// The same with 100 SSE subscribers reading the event stream, and the median of the
        /// repeats' own ratios of it to the run without subscribers right before it (a ratio of
        /// the fastest of each compares runs minutes apart, and one lucky run without subscribers
        /// moved it by a tenth).
        var batchRateWithSubscribers: Double
        var subscriberRatio: Double
        /// Single-reading POSTs from 32 connections at once.
        var singleRate: Double
        var singleP50: Double
        var singleP99: Double
        /// From the restart (after SIGKILL, a million devices ingested) to `/readyz` answering.
        var restartSeconds: Double
    }

    /// A `fenceline serve` process on a free loopback port, with its own store.
    final class Server: @unchecked Sendable {
        let process = Process()
        let port: Int
        let data: String

        init(fenceline: String, catalog: String, data: String) throws {
            self.data = data
            process.executableURL = URL(fileURLWithPath: fenceline)
            process.arguments = ["serve", "--data", data, "--triggers", catalog, "--listen", "127.0.0.1:0"]
            process.environment = ProcessInfo.processInfo.environment.merging(["FENCELINE_TOKEN": ServiceBench.token]) {
                $1
            }
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            var seen = ""
            var found: Int?
            while found == nil {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen += String(decoding: chunk, as: UTF8.self)
                if let match = seen.firstMatch(of: /serving on http:\/\/127\.0\.0\.1:(\d+)/) { found = Int(match.1) }
            }
            guard let found else { throw BenchFailure("the service did not start: \(seen)") }
            port = found
            // Keep reading its log so that it never blocks on a full pipe.
            Thread.detachNewThread { while !errors.fileHandleForReading.availableData.isEmpty {} }
        }

        func kill() {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        func stop() {
            guard process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }
    }

    static let token = "bench-token"

    struct BenchFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    func measure(readings: String, million: String) async throws -> Figures {
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(
                timeout: .init(connect: .seconds(10), read: .seconds(120)),
                connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 200)))
        do {
            let figures = try await measure(readings: readings, million: million, client: client)
            try await client.shutdown()
            return figures
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private func measure(readings: String, million: String, client: HTTPClient) async throws -> Figures {
        let lines = try String(contentsOfFile: readings, encoding: .utf8).split(separator: "\n")
        // The first 300 s of the stream (300,000 readings): long enough to be steady.
        let stretch = Array(lines.prefix(300_000))

        // The timed batches, written once for wrk (all but the first, which installs the catalog).
        let batches = try batchFile(stretch.dropFirst(1_000))
        // The same readings through `fenceline run`, timed as it times itself (from after its
        // first reading, which adds the catalog, as the ingest run is timed), right before each
        // ingest run: this machine's speed moves from one minute to the next, so the ratio is
        // taken between runs of the same stretch of time.
        let stretchFile = "\(directory)/service-stretch.ndjson"
        try (stretch.joined(separator: "\n") + "\n").write(toFile: stretchFile, atomically: true, encoding: .utf8)
        let runArguments = ["run", "--triggers", catalog, stretchFile, "-o", "/dev/null", "--quiet"]
        // The ratio is taken within each repeat (the best of them), its run beside it. The
        // service's first 1,000 readings (the catalog's batch) are not timed, the run's first
        // reading only, which leaves a thousand first fixes on the run's side.
        var paired: (ingest: Double, run: Double)?
        var plain = 0.0
        var watched = 0.0
        var subscriberRatios: [Double] = []
        for _ in 0..<repeats {
            let timed = try Spawned.streaming(of: 1, fenceline, [runArguments])[0]
            guard timed.whole.status == 0 else {
                throw BenchFailure("fenceline run over the service's readings failed")
            }
            let runRate = Double(timed.readings) / timed.seconds
            let ingest = try await ingestRun(stretch, batches: batches, subscribers: 0, client: client)
            if paired == nil || ingest / runRate > paired!.ingest / paired!.run { paired = (ingest, runRate) }
            plain = max(plain, ingest)
            let subscribed = try await ingestRun(stretch, batches: batches, subscribers: 100, client: client)
            watched = max(watched, subscribed)
            subscriberRatios.append(subscribed / ingest)
        }
        let singles = try await singleRun(lines, client: client)
        let restart = try await restartRun(million, client: client)
        return Figures(
            batchRate: plain, runRate: paired!.run, runRatio: paired!.ingest / paired!.run,
            batchRateWithSubscribers: watched,
            subscriberRatio: Self.median(subscriberRatios), singleRate: singles.rate,
            singleP50: singles.p50,
            singleP99: singles.p99, restartSeconds: restart)
    }

    /// The middle value (the mean of the two middle ones for an even count).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return (sorted[(sorted.count - 1) / 2] + sorted[sorted.count / 2]) / 2
    }

    private func freshData(_ name: String) throws -> String {
        let path = "\(directory)/service-\(name)"
        try? FileManager.default.removeItem(atPath: path)
        return path
    }

    private func post(_ client: HTTPClient, port: Int, path: String, body: String) async throws -> Int {
        try await post(client, port: port, path: path, body: ByteBuffer(string: body))
    }

    private func post(_ client: HTTPClient, port: Int, path: String, body: ByteBuffer) async throws -> Int {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(Self.token)")
        request.headers.add(name: "Content-Type", value: "application/x-ndjson")
        request.body = .bytes(body)
        let response = try await client.execute(request, timeout: .seconds(120))
        _ = try await response.body.collect(upTo: 1 << 24)
        return Int(response.status.code)
    }

    /// `lines` posted in batches of `size`, one after another, each answered 200.
    private func postBatches(_ lines: [Substring], of size: Int, to server: Server, client: HTTPClient) async throws {
        try await post(Self.batches(lines, of: size), to: server, client: client)
    }

    /// The bodies of `lines` in batches of `size`, made before any is sent, so that a timed run
    /// measures the service and not the load generator's joining of lines.
    private static func batches(_ lines: [Substring], of size: Int) -> [ByteBuffer] {
        stride(from: 0, to: lines.count, by: size).map {
            ByteBuffer(string: lines[$0..<min($0 + size, lines.count)].joined(separator: "\n"))
        }
    }

    private func post(_ bodies: [ByteBuffer], to server: Server, client: HTTPClient) async throws {
        for body in bodies {
            let status = try await post(client, port: server.port, path: "/v1/readings", body: body)
            guard status == 200 else { throw BenchFailure("a batch was answered \(status)") }
        }
    }

    /// Batches of 1,000 lines posted one after another (`batches`: the lines after the first
    /// 1,000, as ``batchFile(_:)`` wrote them); readings per second of the whole run.
    private func ingestRun(_ lines: [Substring], batches: String, subscribers: Int, client: HTTPClient) async throws
        -> Double
    {
        let server = try Server(fenceline: fenceline, catalog: catalog, data: try freshData("ingest-\(subscribers)"))
        defer { server.stop() }
        // Subscribers are curl processes reading the event stream to its end (the server's
        // shutdown closes it): light clients, at the lowest priority, so that the figure is what
        // the subscribers cost the service, not what reading 100 streams costs clients that share
        // its two cores (in service they run elsewhere).
        var readers: [Process] = []
        for _ in 0..<subscribers {
            let reader = Process()
            reader.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            reader.arguments = [
                "nice", "-n", "19", "curl", "-sN", "-o", "/dev/null", "-H", "Authorization: Bearer \(Self.token)",
                "-w", "%{size_download}\n", "http://127.0.0.1:\(server.port)/v1/events/stream",
            ]
            reader.standardOutput = Pipe()
            reader.standardError = FileHandle.nullDevice
            try reader.run()
            readers.append(reader)
        }
        defer {
            for reader in readers where reader.isRunning {
                kill(reader.processIdentifier, SIGKILL)
                reader.waitUntilExit()
            }
        }
        if subscribers > 0 { try await Task.sleep(for: .seconds(1)) }
        // The first batch installs the catalog (as the first reading of `fenceline run` does):
        // timed from after it, as `--timings` times the run, and after the service has encoded
        // the catalog's requests for its checkpoints on another thread (once per catalog, as the
        // single-POST run waits for it too).
        try await postBatches(Array(lines.prefix(1_000)), of: 1_000, to: server, client: client)
        try await Task.sleep(for: .seconds(2))
        let report = try postWithWrk(bodies: batches, connections: 1, to: server.port)[0]
        guard report.failed == 0 else { throw BenchFailure("\(report.failed) of \(report.posted) batches failed") }
        let seconds = report.end - report.start
        if subscribers > 0 {
            // Every subscriber must have had the stream: the server's shutdown ends each one,
            // and curl then says how much it read.
            server.stop()
            for reader in readers {
                let deadline = ContinuousClock.now + .seconds(10)
                while reader.isRunning && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                guard !reader.isRunning else { throw BenchFailure("an SSE subscriber's stream did not end") }
                let said = (reader.standardOutput as? Pipe).map {
                    String(decoding: $0.fileHandleForReading.availableData, as: UTF8.self)
                }
                guard let read = said.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
                    read > 100_000
                else { throw BenchFailure("an SSE subscriber did not get the stream (curl said \(said ?? "nothing"))") }
            }
        }
        return Double(lines.count - 1_000) / seconds
    }

    /// `lines` in batches of 1,000 as `Tools/bench-posts.lua` reads them (each body's length on
    /// a line, then the body), in a file of the bench's directory; the prefix of its name that
    /// the script is given.
    private func batchFile(_ lines: ArraySlice<Substring>) throws -> String {
        let prefix = "\(directory)/service-batches-"
        try writeBodies(
            stride(from: lines.startIndex, to: lines.endIndex, by: 1_000).map { start in
                lines[start..<min(start + 1_000, lines.endIndex)].joined(separator: "\n")
            }, to: prefix + "0")
        return prefix
    }

    /// `bodies` as `Tools/bench-posts.lua` reads them: each one's length in bytes on a line, then it.
    private func writeBodies(_ bodies: [some StringProtocol], to path: String) throws {
        var bytes: [UInt8] = []
        for body in bodies {
            bytes += "\(body.utf8.count)\n".utf8
            bytes += body.utf8
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// What one wrk thread of `Tools/bench-posts.lua` reports.
    private struct PostedReport {
        var posted, failed: Int
        var start, end: Double
        var latencies: [Double]
    }

    /// Posts the bodies of the files `bodies` + 0, 1, … (one per connection, each on its own)
    /// with wrk and `Tools/bench-posts.lua`, and returns each thread's report.
    private func postWithWrk(bodies: String, connections: Int, to port: Int) throws -> [PostedReport] {
        let lines = try runWrk(
            script: "bench-posts.lua", connections: connections, bodies: bodies, port: port,
            until: { output -> [Substring]? in
                let lines = output.split(separator: "\n").filter { $0.hasPrefix("posted ") }
                return lines.count == connections ? lines : nil
            })
        return try lines.map { line in
            let words = line.split(separator: " ")
            guard words.count >= 9, words[2] == "failed", words[4] == "start", words[6] == "end",
                let posted = Int(words[1]), let failed = Int(words[3]), let start = Double(words[5]),
                let end = Double(words[7])
            else { throw BenchFailure("wrk printed a line the bench does not read: \(line.prefix(200))") }
            return PostedReport(
                posted: posted, failed: failed, start: start, end: end,
                latencies: words.dropFirst(9).compactMap { Double($0) })
        }
    }

    /// Runs wrk with `script` (beside this tool's folder) over `connections` connections, a thread
    /// each, until `until` finds what it waits for in wrk's output (the scripts time the run
    /// themselves, so how soon the output is read does not matter).
    private func runWrk<Result>(
        script: String, connections: Int, bodies: String, port: Int, until: (String) -> Result?
    ) throws -> Result {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(script).path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "wrk", "-t\(connections)", "-c\(connections)", "-d3600s", "--timeout", "120s", "-s", script,
            "http://127.0.0.1:\(port)/",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["BODIES": bodies, "TOKEN": Self.token]) {
            $1
        }
        let outputPath = "\(directory)/service-wrk.out"
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        defer { try? output.close() }
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var seen = ""
        var result: Result?
        let deadline = ContinuousClock.now + .seconds(600)
        while result == nil && process.isRunning && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            seen = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            result = until(seen)
        }
        // wrk would wait out its -d duration, and it inherits the blocked signals of the thread
        // that started it (a dispatch worker blocks SIGINT and SIGTERM): SIGKILL ends it now, its
        // own summary unneeded.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        guard let result else { throw BenchFailure("wrk did not report what \(script) prints: \(seen.suffix(500))") }
        return result
    }

    /// 32 connections, each posting one device's readings one at a time; requests per second and
    /// latency percentiles (ms). Posted by wrk (`Tools/bench-posts.lua`, a thread per
    /// connection), as the batches are: async-http-client in this process took about half of one
    /// of the machine's two cores to send them, so the figure was partly the client's.
    private func singleRun(_ lines: [Substring], client: HTTPClient) async throws -> (
        rate: Double, p50: Double, p99: Double
    ) {
        let server = try Server(fenceline: fenceline, catalog: catalog, data: try freshData("single"))
        defer { server.stop() }
        // Each connection's own device, its readings in time order.
        var perDevice: [Substring: [Substring]] = [:]
        for line in lines.prefix(200_000) {
            guard let start = line.firstRange(of: #""device":""#)?.upperBound,
                let end = line[start...].firstIndex(of: "\"")
            else { continue }
            perDevice[line[start..<end], default: []].append(line)
        }
        let streams = perDevice.keys.sorted().prefix(32).map { Array(perDevice[$0]!.prefix(150)) }
        let prefix = "\(directory)/service-singles-"
        for (number, stream) in streams.enumerated() { try writeBodies(stream, to: prefix + String(number)) }
        // One reading first installs the catalog (timed from after it, as the ingest run is), and
        // the service then encodes its requests for checkpoints on another thread: let it finish.
        let first = try await post(client, port: server.port, path: "/v1/readings", body: String(lines[0]))
        guard first == 200 else { throw BenchFailure("the first reading was answered \(first)") }
        try await Task.sleep(for: .seconds(2))
        let reports = try postWithWrk(bodies: prefix, connections: streams.count, to: server.port)
        guard reports.allSatisfy({ $0.failed == 0 }) else {
            throw BenchFailure("single readings were not all answered 200")
        }
        let latencies = reports.flatMap(\.latencies).sorted()
        guard latencies.count == streams.reduce(0, { $0 + $1.count }) else {
            throw BenchFailure("wrk reported \(latencies.count) latencies")
        }
        let seconds = reports.map(\.end).max()! - reports.map(\.start).min()!
        func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        return (Double(latencies.count) / seconds, percentile(0.5), percentile(0.99))
    }

    /// A million devices ingested in batches of 10,000, SIGKILL, restart: seconds to ready.
    private func restartRun(_ million: String, client: HTTPClient) async throws -> Double {
        let data = try freshData("restart")
        let server = try Server(fenceline: fenceline, catalog: catalog, data: data)
        let lines = try String(contentsOfFile: million, encoding: .utf8).split(separator: "\n")
        try await postBatches(lines, of: 10_000, to: server, client: client)
        server.kill()
        let start = ContinuousClock.now
        let again = try Server(fenceline: fenceline, catalog: catalog, data: data)
        defer { again.stop() }
        while true {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(again.port)/readyz")
            request.method = .GET
            if let response = try? await client.execute(request, timeout: .seconds(5)), response.status == .ok {
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return (ContinuousClock.now - start) / .seconds(1)
    }
}

/// `Tools/bench --soak-minutes N`: the service fed at a steady rate for minutes, to see that its
/// memory stays flat and its batch latency steady (issue 27; run by hand, figures in the README).
struct ServiceSoak {
    let fenceline: String
    let catalog: String
    let directory: String
    let minutes: Double
    let rate: Int

    /// The workload's readings again and again, each pass `passSeconds` later than the one before,
    /// so the stream goes on in event time for as long as the soak lasts.
    struct Stream {
        let lines: [Substring]
        let passSeconds: Int64
        var index = 0
        var pass: Int64 = 0

        mutating func next() -> String {
            if index == lines.count {
                index = 0
                pass += 1
            }
            let line = lines[index]
            index += 1
            guard pass > 0, let start = line.firstRange(of: #""time":""#)?.upperBound,
                let end = line[start...].firstIndex(of: "\""),
                let time = Timestamp(rfc3339: line[start..<end])
            else { return String(line) }
            let shifted = time.advanced(by: TimeSpan(seconds: Double(passSeconds * pass)))
            return String(line[..<start]) + shifted.rfc3339 + String(line[end...])
        }
    }

    func run(readings: String) async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let data = "\(directory)/service-soak"
        try? FileManager.default.removeItem(atPath: data)
        let server = try ServiceBench.Server(fenceline: fenceline, catalog: catalog, data: data)
        let lines = try String(contentsOfFile: readings, encoding: .utf8).split(separator: "\n")
        var stream = Stream(lines: lines, passSeconds: 1_000)
        let batch = 1_000
        let interval = Duration.seconds(Double(batch) / Double(rate))
        let start = ContinuousClock.now
        var next = start
        var window: [Double] = []
        var windowStart = start
        var sent = 0
        print("soak: \(rate) readings/s in batches of \(batch) for \(minutes) min; a line every 30 s")
        print("elapsed  readings   RSS MB  batch p50 ms  p99 ms")
        while ContinuousClock.now - start < .seconds(minutes * 60) {
            let body = (0..<batch).map { _ in stream.next() }.joined(separator: "\n")
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/v1/readings")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(ServiceBench.token)")
            request.headers.add(name: "Content-Type", value: "application/x-ndjson")
            request.body = .bytes(ByteBuffer(string: body))
            let sentAt = ContinuousClock.now
            let response = try await client.execute(request, timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 24)
            guard response.status == .ok else {
                throw ServiceBench.BenchFailure("a batch was answered \(response.status)")
            }
            window.append((ContinuousClock.now - sentAt) / .milliseconds(1))
            sent += batch
            let last = ContinuousClock.now - start >= .seconds(minutes * 60)
            if ContinuousClock.now - windowStart >= .seconds(30) || last {
                window.sort()
                let rss =
                    (try? String(contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8))?
                    .split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?
                    .split(separator: " ").dropFirst().first.flatMap { Double($0) }.map { $0 / 1024 } ?? 0
                print(
                    String(
                        format: "%5.0f s  %9d  %7.0f  %12.1f  %6.1f", (ContinuousClock.now - start) / .seconds(1), sent,
                        rss, window[window.count / 2], window[min(window.count - 1, window.count * 99 / 100)]))
                window = []
                windowStart = .now
            }
            next = next.advanced(by: interval)
            if next > .now { try await Task.sleep(until: next) }
        }
        server.stop()
        try await client.shutdown()
    }
}
