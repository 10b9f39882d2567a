import Foundation
import Glibc
import TestSupport
import Testing

/// `fenceline serve` over real HTTP (curl on loopback): auth, ingest with idempotency, the event
/// log, requests managed live and their 201/200/404/422 answers, and the export that `fenceline
/// run` turns back into the same events.
@Suite(.serialized) struct ServiceCommandTests {
    /// A running service on a free port, stopped (SIGTERM) at the end.
    final class Server {
        let process = Process()
        let port: Int
        let directory: URL
        /// What it wrote to standard error up to "serving on".
        let startupLog: String

        init(
            triggers: String, directory: URL? = nil, arguments: [String] = [], environment: [String: String] = [:],
            token: String? = "t0ken"
        ) throws {
            self.directory = try directory ?? CLI.temporaryDirectory()
            process.executableURL = CLI.binary
            process.arguments =
                [
                    "serve", "--data", self.directory.appendingPathComponent("store").path, "--triggers", triggers,
                    "--listen", "127.0.0.1:0",
                ] + arguments
            // Without `token`, the service makes one for a new store (and prints it).
            var merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            merged["FENCELINE_TOKEN"] = token
            process.environment = merged
            process.currentDirectoryURL = Fixtures.packageRoot
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            var seen = ""
            var found: Int?
            let deadline = Date().addingTimeInterval(20)
            while found == nil && Date() < deadline {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen += String(decoding: chunk, as: UTF8.self)
                if let match = seen.firstMatch(of: /serving on http:\/\/127\.0\.0\.1:(\d+)/) { found = Int(match.1) }
            }
            guard let found else { throw CLIFailure(message: "the service did not start: \(seen)") }
            port = found
            startupLog = seen
        }

        /// curl with the token (unless `token` is nil); returns the status line's code and the body.
        func call(
            _ method: String, _ path: String, body: String? = nil, token: String? = "t0ken", headers: [String] = []
        )
            throws -> (status: Int, body: String)
        {
            var arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", "-X", method]
            if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
            for header in headers { arguments += ["-H", header] }
            // curl would call a body a form; the service's JSON endpoints answer that with 415.
            if body != nil, !headers.contains(where: { $0.lowercased().hasPrefix("content-type:") }) {
                arguments += ["-H", "Content-Type: application/json"]
            }
            if let body { arguments += ["--data-binary", body] }
            arguments.append("http://127.0.0.1:\(port)\(path)")
            let result = try CLI.run(arguments, executable: URL(fileURLWithPath: "/usr/bin/curl"))
            let parts = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(parts.last ?? "") ?? 0, parts.dropLast().joined(separator: "\n"))
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    struct CLIFailure: Error { var message: String }

    /// The logged events (JSON objects) and the first lines of a replay's output are the same
    /// events, member for member.
    static func expectSameEvents(_ events: [[String: Any]], _ replayed: [Substring]) throws {
        for (index, event) in events.enumerated() where index < replayed.count {
            let line = try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys])
            let again = try JSONSerialization.data(
                withJSONObject: try JSONSerialization.jsonObject(with: Data(replayed[index].utf8)),
                options: [.sortedKeys])
            #expect(line == again, "event \(index + 1)")
        }
    }

    /// `fenceline run` over the server's export (with the catalog it started from) writes exactly
    /// its event log `log` (the body of `GET /v1/events`).
    static func expectExportReplays(_ server: Server, to log: String, triggers: String, in directory: URL) throws {
        let exported = directory.appendingPathComponent("export.ndjson").path
        try server.call("GET", "/v1/export").body.write(toFile: exported, atomically: true, encoding: .utf8)
        let replay = try CLI.run(["run", "--quiet", "--triggers", triggers, exported])
        let events = try #require(
            (try JSONSerialization.jsonObject(with: Data(log.utf8)) as? [String: Any])?["events"] as? [[String: Any]])
        let replayed = replay.stdout.split(separator: "\n")
        #expect(replayed.count == events.count, "\(replay.stdout)\(replay.stderr)")
        try expectSameEvents(events, replayed)
    }

    /// `Tools/webhook-receiver` on a free loopback port, logging what it gets to `log`.
    final class Receiver {
        let process = Process()
        let log: URL
        let port: String

        init(in directory: URL, secret: String, options: [String] = []) throws {
            log = directory.appendingPathComponent("received.ndjson")
            let portFile = directory.appendingPathComponent("receiver-port")
            process.executableURL = Fixtures.packageRoot.appendingPathComponent("Tools/webhook-receiver")
            process.arguments = ["--secret", secret, "--log", log.path, "--port-file", portFile.path] + options
            // Not this process's pipes: `swift test` waits for every holder of its output to close it.
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            var port = ""
            for _ in 0..<100 where port.isEmpty {
                Thread.sleep(forTimeInterval: 0.05)
                port = (try? String(contentsOf: portFile, encoding: .utf8)) ?? ""
            }
            self.port = port
        }

        func stop() {
            guard process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// What an HTTP client library relies on: a 401 names the Bearer scheme; HEAD works where GET
    /// does; a batch's answer
    /// counts stale readings apart from the accepted (SPEC §4: skipped); a compressed body is a
    /// 415 naming the coding taken; an empty Last-Event-ID is no id; a new store is the owner's.
    @Test func clientsGetSchemesCountsCodingsAndAPrivateStore() throws {
        let server = try Server(triggers: "Data/scenarios/real-drive-visnjan/triggers.json")
        defer { server.stop() }
        func curl(_ arguments: [String]) throws -> String {
            try CLI.run(["-s", "-i", "-m", "2"] + arguments, executable: URL(fileURLWithPath: "/usr/bin/curl")).stdout
                .lowercased()
        }
        let base = "http://127.0.0.1:\(server.port)"
        let refused = try curl(["\(base)/v1/events"])
        #expect(refused.hasPrefix("http/1.1 401") && refused.contains(#"www-authenticate: bearer realm="fenceline""#))
        // HEAD wherever GET is, without a body; a POST-only route lists what it takes.
        let head = try curl(["-I", "\(base)/healthz"])
        #expect(head.hasPrefix("http/1.1 200") && !head.contains("status"), "\(head)")
        #expect(try curl(["-I", "-H", "Authorization: Bearer t0ken", "\(base)/v1/events"]).hasPrefix("http/1.1 200"))
        let wrong = try curl(["-X", "PUT", "-H", "Authorization: Bearer t0ken", "\(base)/v1/events"])
        #expect(wrong.hasPrefix("http/1.1 405") && wrong.contains("allow: get, head"), "\(wrong)")

        let ndjson = ["Content-Type: application/x-ndjson"]
        let lines = [
            #"{"device":"a","time":"2026-03-02T08:00:10Z","lat":45.2,"lon":13.9}"#,
            #"{"device":"a","time":"2026-03-02T08:00:05Z","lat":45.2,"lon":13.9}"#,
            #"{"device":"b","time":"2026-03-02T08:00:10Z","lat":45.2,"lon":13.9}"#, "{bad",
        ]
        let answer = try server.call("POST", "/v1/readings", body: lines.joined(separator: "\n"), headers: ndjson)
        #expect(answer.body.contains(#""accepted":2,"#) && answer.body.contains(#""skipped":1,"#), "\(answer.body)")
        #expect(answer.body.contains(#""stale":1"#), "\(answer.body)")
        let metrics = try server.call("GET", "/metrics").body
        #expect(metrics.contains("fenceline_readings_total 3"), "the CLI's count: stale readings too")

        let coded = try curl([
            "-H", "Authorization: Bearer t0ken", "-H", "Content-Type: application/x-ndjson", "-H",
            "Content-Encoding: gzip", "--data-binary", lines[0], "\(base)/v1/readings",
        ])
        #expect(coded.hasPrefix("http/1.1 415") && coded.contains("accept-encoding: identity"), "\(coded)")
        #expect(coded.contains("content-encoding: gzip"))

        let stream = try curl([
            "-N", "-H", "Authorization: Bearer t0ken", "-H", "Last-Event-ID;",
            "\(base)/v1/events/stream",
        ])
        #expect(stream.hasPrefix("http/1.1 200"), "\(stream)")

        let store = server.directory.appendingPathComponent("store").path
        let mode = { (path: String) in
            ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int).map { $0 & 0o777 }
        }
        #expect(mode(store) == 0o700 && mode(store + "/fenceline.sqlite") == 0o600)
    }

    /// While a large catalog is loaded the service already listens: alive (`/healthz` 200), not
    /// ready (`/readyz` 503), every other path 503 `starting` behind the token; "serving on" comes
    /// once ready, and a SIGTERM meanwhile ends it cleanly once the recovery is done.
    @Test func aServiceRecoveringItsStateIsAliveButNotReady() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("catalog.json")
        let circles = (0..<40_000).map { index in
            #"{"id":"c\#(index)","trigger":{"type":"region","center":{"lat":\#(50 + Double(index % 200) / 100),"lon":\#(4 + Double(index / 200) / 100)},"radius":50}}"#
        }
        try Data((#"{"requests":["# + circles.joined(separator: ",") + "]}").utf8).write(to: catalog)
        for stop in [false, true] {
            let process = Process()
            process.executableURL = CLI.binary
            process.arguments = [
                "serve", "--data", directory.appendingPathComponent("store-\(stop)").path, "--triggers", catalog.path,
                "--listen", "127.0.0.1:0",
            ]
            process.environment = ProcessInfo.processInfo.environment.merging(["FENCELINE_TOKEN": "t0ken"]) { $1 }
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            defer { if process.isRunning { process.interrupt() } }
            var seen = ""
            var port: Int?
            while port == nil {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen += String(decoding: chunk, as: UTF8.self)
                if let match = seen.firstMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+), recovering/) {
                    port = Int(match.1)
                }
                if seen.contains("serving on") { break }  // ready before it said it listens
            }
            let base = "http://127.0.0.1:\(try #require(port, "\(seen)"))"
            func curl(_ arguments: [String]) throws -> String {
                try CLI.run(["-s", "-i", "-m", "5"] + arguments, executable: URL(fileURLWithPath: "/usr/bin/curl"))
                    .stdout.lowercased()
            }
            let ready = try curl(["\(base)/readyz"])
            #expect(ready.hasPrefix("http/1.1 503") && ready.contains("retry-after: 1"), "\(ready)")
            #expect(try curl(["\(base)/healthz"]).hasPrefix("http/1.1 200"))
            #expect(try curl(["\(base)/v1/events"]).hasPrefix("http/1.1 401"))
            let starting = try curl(["-H", "Authorization: Bearer t0ken", "\(base)/v1/events"])
            #expect(starting.hasPrefix("http/1.1 503") && starting.contains(#""code":"starting""#), "\(starting)")
            if stop {
                process.terminate()
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
                // Stopped before ready: it never says it serves.
                seen += String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                #expect(!seen.contains("serving on"), "\(seen)")
                continue
            }
            while !seen.contains("serving on") {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen += String(decoding: chunk, as: UTF8.self)
            }
            #expect(try curl(["\(base)/readyz"]).hasPrefix("http/1.1 200"))
            let events = try curl(["-H", "Authorization: Bearer t0ken", "\(base)/v1/events"])
            #expect(events.hasPrefix("http/1.1 200"), "\(events)")
            // HEAD of a streamed GET claims no length (the GET has none).
            let head = try curl(["-I", "-H", "Authorization: Bearer t0ken", "\(base)/v1/export"])
            #expect(head.hasPrefix("http/1.1 200") && !head.contains("content-length: 0"), "\(head)")
            process.terminate()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
    }

    /// A token is made for a new store only by a run that loads it: one that fails on its
    /// catalog keeps none and shows none, and the next run makes and shows one.
    @Test func aRunThatFailsOnItsCatalogMakesNoToken() throws {
        let directory = try CLI.temporaryDirectory()
        let bad = directory.appendingPathComponent("bad.json")
        try Data(#"{"requests":[{"id":"a","trigger":{"type":"region","radius":-1}}]}"#.utf8).write(to: bad)
        let store = directory.appendingPathComponent("store").path
        var environment = ProcessInfo.processInfo.environment
        environment["FENCELINE_TOKEN"] = nil
        let failed = try CLI.run(
            ["serve", "--data", store, "--triggers", bad.path, "--listen", "127.0.0.1:0"], environment: environment)
        #expect(failed.status == 65 && !failed.stderr.contains("token"), "\(failed.stderr)")
        let server = try Server(
            triggers: "Data/scenarios/real-drive-visnjan/triggers.json", directory: directory, token: nil)
        server.stop()
        #expect(server.startupLog.contains("a token was made for this store"), "\(server.startupLog)")
    }

    @Test func ingestRequestsAndTheExportReplay() throws {
        let scenario = "Data/scenarios/real-drive-visnjan"
        let server = try Server(triggers: "\(scenario)/triggers.json")
        defer { server.stop() }
        #expect(try server.call("GET", "/healthz", token: nil).status == 200)
        #expect(try server.call("GET", "/v1/events", token: nil).status == 401)
        #expect(try server.call("GET", "/v1/events", token: "wrong").status == 401)
        // The scheme in any case (RFC 9110), the token exactly.
        for (header, status) in [
            ("bearer t0ken", 200), ("BEARER  t0ken", 200), ("Bearer T0KEN", 401), ("Basic t0ken", 401),
            ("Bearer", 401), ("t0ken", 401),
        ] {
            let answer = try server.call("GET", "/v1/events", token: nil, headers: ["Authorization: \(header)"])
            #expect(answer.status == status, "\(header)")
        }

        let created = try server.call(
            "PUT", "/v1/requests/ping", body: #"{"trigger":{"type":"timeInterval","seconds":120,"repeats":true}}"#)
        #expect(created.status == 201)
        #expect(
            try server.call(
                "PUT", "/v1/requests/ping", body: #"{"trigger":{"type":"timeInterval","seconds":300,"repeats":true}}"#
            ).status == 200, "replaced, though it waits for the first reading's clock")
        let invalid = try server.call(
            "PUT", "/v1/requests/bad", body: #"{"trigger":{"type":"region","center":{"lat":95,"lon":1},"radius":5}}"#)
        #expect(invalid.status == 422)
        #expect(invalid.body.contains(#""field":"trigger.center""#), "\(invalid.body)")
        // Attachments are checked as in a catalog, the field named by its path.
        let media =
            #"{"content":{"attachments":[{"id":"a","url":"ftp://x/a.png"}]},"trigger":{"type":"timeInterval","seconds":600}}"#
        let badMedia = try server.call("PUT", "/v1/requests/media", body: media)
        #expect(
            badMedia.status == 422 && badMedia.body.contains(#""field":"content.attachments[0].url""#),
            "\(badMedia.body)")
        let goodMedia = media.replacingOccurrences(of: "ftp://x/a.png", with: "https://x/{device}.png")
        #expect(try server.call("PUT", "/v1/requests/media", body: goodMedia).status == 201)
        #expect(try server.call("DELETE", "/v1/requests/media").status == 200)
        #expect(try server.call("DELETE", "/v1/requests/nothing").status == 404)
        let form = try server.call(
            "PUT", "/v1/requests/ping", body: #"{"trigger":{"type":"timeInterval","seconds":60}}"#,
            headers: ["Content-Type: application/x-www-form-urlencoded"])
        #expect(form.status == 415 && form.body.contains("unsupported_media_type"), "\(form.body)")

        let lines = try String(
            contentsOfFile: "\(Fixtures.packageRoot.path)/\(scenario)/readings.ndjson", encoding: .utf8
        )
        .split(separator: "\n")
        let ndjson = "Content-Type: application/x-ndjson"
        let first = lines[..<60].joined(separator: "\n") + "\n{\"device\":\"car\",\"time\":1,\"lat\":95,\"lon\":1}\n"
        let answer = try server.call("POST", "/v1/readings", body: first, headers: [ndjson, "Idempotency-Key: one"])
        #expect(answer.status == 200)
        #expect(answer.body.contains(#""accepted":60"#))
        #expect(answer.body.contains(#""errors":[{"line":61,"reason":"field \"lat\": "#), "\(answer.body)")
        let again = try server.call("POST", "/v1/readings", body: first, headers: [ndjson, "Idempotency-Key: one"])
        #expect(again.body == answer.body, "a repeated key answers as the first time and applies nothing")
        #expect(
            try server.call("POST", "/v1/readings", body: first, headers: ["Content-Type: image/png"]).status == 415)
        let huge = server.directory.appendingPathComponent("huge.ndjson").path
        try (lines[60] + "\n{\"device\":\"" + String(repeating: "x", count: 1_100_000) + "\"}\n").write(
            toFile: huge, atomically: true, encoding: .utf8)
        let refused = try server.call("POST", "/v1/readings", body: "@" + huge, headers: [ndjson])
        #expect(refused.status == 413)
        #expect(refused.body.contains(#""line":2"#), "\(refused.body)")
        let rest = lines[60...].joined(separator: "\n") + "\n"
        #expect(try server.call("POST", "/v1/readings", body: rest, headers: [ndjson]).status == 200)
        #expect(try server.call("DELETE", "/v1/requests/ping").status == 200)

        // `fenceline run` over the export (with the start catalog) gives the event log, and more:
        // the events of the instant still open in the service.
        let export = try server.call("GET", "/v1/export")
        #expect(export.status == 200)
        let exported = server.directory.appendingPathComponent("export.ndjson").path
        try export.body.write(toFile: exported, atomically: true, encoding: .utf8)
        let replay = try CLI.run(["run", "--quiet", "--triggers", "\(scenario)/triggers.json", exported])
        let log = try server.call("GET", "/v1/events?limit=10000")
        let logged = try #require(try JSONSerialization.jsonObject(with: Data(log.body.utf8)) as? [String: Any])
        let events = try #require(logged["events"] as? [[String: Any]])
        let replayed = replay.stdout.split(separator: "\n")
        #expect(events.count >= 6)
        #expect(replayed.count >= events.count)
        try Self.expectSameEvents(events, replayed)
        #expect(try server.call("GET", "/v1/nothing").status == 404)

        // The event stream resumes after Last-Event-ID with no gap and no repeat.
        let stream = try CLI.run(
            [
                "-s", "-N", "--max-time", "1", "-H", "Authorization: Bearer t0ken", "-H", "Last-Event-ID: 4",
                "http://127.0.0.1:\(server.port)/v1/events/stream",
            ], executable: URL(fileURLWithPath: "/usr/bin/curl"))
        let ids = stream.stdout.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { Int($0.dropFirst(4)) }
        #expect(ids == (5...events.count).map { $0 }, "\(stream.stdout.prefix(300))")
        #expect(stream.stdout.contains("event: "))

        // SIGTERM with a stream open: the stream ends, the service checkpoints and exits 0.
        let open = Process()
        open.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        open.arguments = [
            "-s", "-N", "-H", "Authorization: Bearer t0ken", "http://127.0.0.1:\(server.port)/v1/events/stream",
        ]
        open.standardOutput = FileHandle.nullDevice
        try open.run()
        Thread.sleep(forTimeInterval: 0.3)
        let started = Date()
        server.stop()
        #expect(server.process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(started) < 8)
        open.waitUntilExit()
    }

    /// An event-stream subscriber that goes away is let go at once, not at the stream's next
    /// write (a keep-alive, 15 s on a quiet log): /metrics counts the open streams.
    @Test func aClosedEventStreamEndsAtOnce() throws {
        let server = try Server(triggers: "Data/scenarios/real-drive-visnjan/triggers.json")
        defer { server.stop() }
        func subscribers() throws -> Int? {
            let text = try server.call("GET", "/metrics").body
            return text.firstMatch(of: /\nfenceline_event_stream_subscribers (\d+)/).flatMap { Int($0.1) }
        }
        #expect(try subscribers() == 0)
        var socket: Socket? = try Socket(port: server.port)
        try socket?.send("GET /v1/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t0ken\r\n\r\n")
        #expect(socket?.receive() ?? 0 > 0)
        #expect(try subscribers() == 1)
        socket = nil  // closes it
        let deadline = Date().addingTimeInterval(5)
        var open = try subscribers()
        while open != 0 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            open = try subscribers()
        }
        #expect(open == 0)
    }

    /// Webhooks: registered with checked fields, every event delivered signed (checked by the
    /// receiver with the secret), listed without the secret, counted in /metrics; and a device's
    /// standing from GET /v1/devices/{id}.
    @Test func webhooksMetricsAndDevices() throws {
        let scenario = "Data/scenarios/real-drive-visnjan"
        let server = try Server(triggers: "\(scenario)/triggers.json")
        defer { server.stop() }
        let receiver = try Receiver(in: server.directory, secret: "s3cret")
        defer { receiver.stop() }
        let (log, receiverPort) = (receiver.log, receiver.port)
        let json = "Content-Type: application/json"
        let bad = try server.call("POST", "/v1/webhooks", body: #"{"url":"ftp://x","secret":"s"}"#, headers: [json])
        #expect(bad.status == 422 && bad.body.contains(#""field":"url""#), "\(bad.body)")
        let noSecret = try server.call("POST", "/v1/webhooks", body: #"{"url":"http://127.0.0.1:1/"}"#, headers: [json])
        #expect(noSecret.status == 422 && noSecret.body.contains(#""field":"secret""#))
        let kinds = try server.call(
            "POST", "/v1/webhooks", body: #"{"url":"http://127.0.0.1:1/","secret":"s","events":["arrive"]}"#,
            headers: [json])
        #expect(kinds.status == 422 && kinds.body.contains(#""field":"events""#))
        let created = try server.call(
            "POST", "/v1/webhooks", body: #"{"url":"http://127.0.0.1:\#(receiverPort)/hook","secret":"s3cret"}"#,
            headers: [json])
        #expect(created.status == 201, "\(created.body)")
        #expect(!created.body.contains("s3cret"), "the secret is never shown")

        let readings = try String(
            contentsOfFile: "\(Fixtures.packageRoot.path)/\(scenario)/readings.ndjson", encoding: .utf8)
        #expect(
            try server.call("POST", "/v1/readings", body: readings, headers: ["Content-Type: application/x-ndjson"])
                .status == 200)
        let page = try server.call("GET", "/v1/events?limit=10000")
        let events = try #require(
            (try JSONSerialization.jsonObject(with: Data(page.body.utf8)) as? [String: Any])?["events"]
                as? [[String: Any]])
        #expect(events.count >= 6)
        var backlog = -1
        for _ in 0..<100 where backlog != 0 {
            Thread.sleep(forTimeInterval: 0.1)
            let list = try server.call("GET", "/v1/webhooks")
            backlog = (list.body.firstMatch(of: /"backlog":(\d+)/).map { Int($0.1)! }) ?? -1
        }
        #expect(backlog == 0)
        let tries = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(tries.allSatisfy { $0["valid"] as? Bool == true }, "every signature checks out")
        #expect(tries.compactMap { $0["seq"] as? Int } == events.compactMap { $0["seq"] as? Int })
        let listed = try server.call("GET", "/v1/webhooks")
        #expect(listed.body.contains(#""delivered":\#(events.count)"#) && !listed.body.contains("s3cret"))

        let metrics = try server.call("GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("fenceline_readings_total 104"), "\(metrics.body.prefix(400))")
        #expect(metrics.body.contains("fenceline_webhook_deliveries_total \(events.count)"))
        #expect(metrics.body.contains("fenceline_events_total{kind=\"enter\"}"))
        #expect(metrics.body.contains("fenceline_ingest_duration_seconds_count 1"))
        let pending = try #require(
            (try JSONSerialization.jsonObject(with: Data(try server.call("GET", "/v1/requests").body.utf8))
                as? [String: Any])?["requests"] as? [Any])
        #expect(
            metrics.body.contains("fenceline_pending_requests \(pending.count).0"),
            "the gauge counts what GET /v1/requests lists (\(pending.count))")
        #expect(try server.call("GET", "/metrics", token: nil).status == 401)

        let device = try server.call("GET", "/v1/devices/car")
        #expect(device.status == 200)
        #expect(device.body.contains(#""lastReading":{"#) && device.body.contains(#""device":"car""#), "\(device.body)")
        #expect(try server.call("GET", "/v1/devices/nobody").status == 404)

        let id = try #require(created.body.firstMatch(of: /"id":"(wh_[0-9a-f]+)"/)).1
        #expect(try server.call("DELETE", "/v1/webhooks/\(id)").status == 200)
        #expect(try server.call("DELETE", "/v1/webhooks/\(id)").status == 404)
    }

    /// `--retention`: the journal and the log are dropped up to a checkpoint older than the
    /// period; `fenceline run --resume` from that checkpoint (`GET /v1/export/checkpoint`) over
    /// the export still gives exactly the log that is left.
    @Test func retentionDropsTheOldLogAndTheExportStillReplaysIt() async throws {
        let scenario = "Data/scenarios/real-drive-visnjan"
        let server = try Server(
            triggers: "\(scenario)/triggers.json", arguments: ["--retention", "12", "--checkpoint-every", "10"])
        defer { server.stop() }
        #expect(try server.call("GET", "/v1/export/checkpoint").status == 404, "nothing dropped yet")
        let lines = try String(
            contentsOfFile: "\(Fixtures.packageRoot.path)/\(scenario)/readings.ndjson", encoding: .utf8
        ).split(separator: "\n")
        func post(_ range: Range<Int>) throws {
            for start in stride(from: range.lowerBound, to: range.upperBound, by: 20) {
                let batch = lines[start..<min(start + 20, range.upperBound)].joined(separator: "\n")
                let answer = try server.call(
                    "POST", "/v1/readings", body: batch, headers: ["Content-Type: application/x-ndjson"])
                #expect(answer.status == 200, "\(answer.body)")
            }
        }
        // The reads below have 12 s after the last batch before a checkpoint taken after it is old
        // enough to drop everything (with 2 s, and then 6 s, a loaded machine was sometimes too
        // slow for them: the log was empty when read).
        try post(0..<70)
        try await Task.sleep(for: .seconds(12.5))  // not Thread.sleep: the tests' threads are few
        try post(70..<lines.count)
        let base = server.directory.appendingPathComponent("base.ckpt")
        let copy = server.directory.appendingPathComponent("base-again.ckpt")
        func download(_ file: URL) throws -> Int {
            let result = try CLI.run(
                [
                    "-s", "-o", file.path, "-w", "%{http_code}", "-H", "Authorization: Bearer t0ken",
                    "http://127.0.0.1:\(server.port)/v1/export/checkpoint",
                ], executable: URL(fileURLWithPath: "/usr/bin/curl"))
            return Int(result.stdout) ?? 0
        }
        func exportBase(_ path: String) throws -> String? {
            let headers = try CLI.run(
                [
                    "-s", "-D", "-", "-o", "/dev/null", "-H", "Authorization: Bearer t0ken",
                    "http://127.0.0.1:\(server.port)\(path)",
                ], executable: URL(fileURLWithPath: "/usr/bin/curl"))
            return headers.stdout.firstMatch(of: /(?i)fenceline-export-base: (\d+)/).map { String($0.1) }
        }
        // A prune may run between the reads: read again until the base stayed the same (the two
        // answers name the base they start from).
        var export = ""
        var log = ""
        // Up to 30 s: on a loaded machine the first checkpoints and prunes come late.
        for _ in 0..<60 {
            guard try download(base) == 200 else {
                try await Task.sleep(for: .milliseconds(500))
                continue
            }
            let named = try exportBase("/v1/export/checkpoint")
            export = try server.call("GET", "/v1/export").body
            log = try server.call("GET", "/v1/events?limit=10000").body
            // A base past the drive's first events (a slow machine may prune to an earlier one
            // first): a journal row holds a batch, so position 3 is past its first 40 lines.
            if try download(copy) == 200, try Data(contentsOf: base) == Data(contentsOf: copy),
                try exportBase("/v1/export") == named, let named, Int(named) ?? 0 >= 3
            {
                break
            }
            export = ""
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(!export.isEmpty, "a base checkpoint and a stable read")
        #expect(export.split(separator: "\n").count < lines.count, "the oldest journal lines were dropped")
        let exported = server.directory.appendingPathComponent("export.ndjson").path
        try export.write(toFile: exported, atomically: true, encoding: .utf8)
        let replay = try CLI.run(["run", "--quiet", "--resume", base.path, exported])
        #expect(replay.status == 0, "\(replay.stderr)")
        let events = try #require(
            (try JSONSerialization.jsonObject(with: Data(log.utf8)) as? [String: Any])?["events"] as? [[String: Any]])
        let replayed = replay.stdout.split(separator: "\n")
        #expect(replayed.count >= events.count)
        #expect(!events.isEmpty && (events.first?["seq"] as? Int ?? 1) > 1, "the oldest events were dropped: \(log)")
        try Self.expectSameEvents(events, replayed)
    }

    /// `PUT /v1/categories` replaces the set whole as a journaled `setCategories` record: requests
    /// may then name the new categories, events carry the new actions, a category in use cannot be
    /// dropped (409), and `fenceline run` over the export gives the log.
    /// Many clients at once, each posting its device's readings one line at a time: the batches
    /// are written in groups (one sync for many), in the order they were applied, so the export
    /// still replays to exactly the event log, and every answer came after its batch was durable.
    @Test func concurrentClientsAreGroupCommittedInOrder() throws {
        let scenario = "Data/scenarios/devices-scope"
        let directory = try CLI.temporaryDirectory()
        let server = try Server(triggers: "\(scenario)/triggers.json", directory: directory)
        defer { server.stop() }
        // 16 devices, 40 readings each, walking in and out of the fences.
        var script = ""
        for device in 0..<16 {
            var lines: [String] = []
            for step in 0..<40 {
                let north = Double((step * 7 + device * 3) % 41 - 20) * 10
                let lat = 52.37 + north / 111_320
                lines.append(
                    #"{"device":"truck-\#(device)","time":\#(1_772_438_400 + step * 5 + device % 5),"lat":\#(lat),"lon":4.89}"#
                )
            }
            let file = directory.appendingPathComponent("d\(device).ndjson")
            try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            script +=
                "(while IFS= read -r line; do curl -s -o /dev/null -w '%{http_code}\\n' -H 'Authorization: Bearer t0ken' "
                + "-H 'Content-Type: application/x-ndjson' --data-binary \"$line\" http://127.0.0.1:\(server.port)/v1/readings; "
                + "done < \(file.path)) > \(file.path).codes &\n"
        }
        script += "wait\n"
        let run = try CLI.runShell(script, arguments: [])
        #expect(run.status == 0, "\(run.stderr)")
        for device in 0..<16 {
            let codes = try String(
                contentsOf: directory.appendingPathComponent("d\(device).ndjson.codes"), encoding: .utf8)
            #expect(codes.split(separator: "\n").allSatisfy { $0 == "200" }, "truck-\(device): \(codes)")
        }
        #expect(
            try server.call(
                "POST", "/v1/readings", body: #"{"op":"tick","time":1772438800}"#,
                headers: ["Content-Type: application/x-ndjson"]
            ).status == 200)
        let log = try server.call("GET", "/v1/events?limit=10000").body
        #expect(log.contains(#""event":"enter""#), "\(log)")
        try Self.expectExportReplays(server, to: log, triggers: "\(scenario)/triggers.json", in: directory)
    }

    /// A response naming a request and device answers the notification the user was shown, even
    /// while its instant is open (its seq not given yet): the record closes the instant first and
    /// is journaled even when refused, and the export still replays to the log.
    @Test func aResponseAnswersTheNotificationOfTheOpenInstant() throws {
        let scenario = "Data/scenarios/responses-depot"
        let server = try Server(triggers: "\(scenario)/triggers.json")
        defer { server.stop() }
        let ndjson = ["Content-Type: application/x-ndjson"]
        let lines = try String(
            contentsOfFile: "\(Fixtures.packageRoot.path)/\(scenario)/readings.ndjson", encoding: .utf8
        ).split(separator: "\n")
        let batch = try server.call("POST", "/v1/readings", body: lines[..<3].joined(separator: "\n"), headers: ndjson)
        #expect(batch.body.contains(#""firstSeq":null"#), "the enter waits for its instant to close: \(batch.body)")
        // A refused answer closed the instant all the same: journaled, and its enter numbered.
        let refused = try server.call(
            "POST", "/v1/responses", body: #"{"request":"depot-7","device":"truck-17","action":"unload"}"#)
        #expect(refused.status == 422 && refused.body.contains("invalid_response"), "\(refused.body)")
        let afterRefusal = try server.call("GET", "/v1/export").body
        #expect(afterRefusal.hasSuffix(#""op":"respond","request":"depot-7"}"# + "\n"), "\(afterRefusal)")
        #expect(try server.call("GET", "/v1/events").body.contains(#""seq":1,"#))
        let answer = try server.call(
            "POST", "/v1/responses", body: #"{"request":"depot-7","device":"truck-17","action":"ack"}"#)
        #expect(answer.status == 200, "\(answer.body)")
        #expect(answer.body.contains(#""respondsTo":1,"action":"ack""#), "\(answer.body)")
        let log = try server.call("GET", "/v1/events").body
        #expect(log.contains(#""seq":1,"time":"2026-03-02T08:00:10Z","request":"depot-7""#), "\(log)")
        #expect(try server.call("POST", "/v1/readings", body: #"{"op":"tick"}"#, headers: ndjson).status == 200)
        let export = try server.call("GET", "/v1/export").body
        #expect(export.contains(#"{"action":"ack","device":"truck-17","op":"respond""#), "\(export)")
        let file = server.directory.appendingPathComponent("export.ndjson").path
        try export.write(toFile: file, atomically: true, encoding: .utf8)
        let replay = try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", file])
        let events = try #require(
            (try JSONSerialization.jsonObject(with: Data(try server.call("GET", "/v1/events").body.utf8))
                as? [String: Any])?["events"] as? [[String: Any]])
        let replayed = replay.stdout.split(separator: "\n")
        #expect(events.count == 3 && replayed.count == 3, "\(replay.stdout)")
        try Self.expectSameEvents(events, replayed)
    }

    /// `POST /v1/responses` and `respond` lines in a batch (SPEC §8, §11): 200 with the response
    /// event, 404 for a notification not delivered (or removed), 422 for an action it does not
    /// offer; the delivered list keeps the answer; the export replays to the same event log, and a
    /// restart keeps it all.
    @Test func responsesAreTakenRefusedAndReplayed() throws {
        let scenario = "Data/scenarios/responses-depot"
        let directory = try CLI.temporaryDirectory()
        var server = try Server(triggers: "\(scenario)/triggers.json", directory: directory)
        let ndjson = ["Content-Type: application/x-ndjson"]
        let none = try server.call("POST", "/v1/responses", body: #"{"seq":1,"action":"ack"}"#)
        #expect(none.status == 404, "before any reading: \(none.body)")
        let lines = try String(
            contentsOfFile: "\(Fixtures.packageRoot.path)/\(scenario)/readings.ndjson", encoding: .utf8
        )
        .split(separator: "\n").map(String.init)
        // The readings and the scenario's own respond lines up to the removeDelivered (line 12).
        let batch = try server.call("POST", "/v1/readings", body: lines[..<11].joined(separator: "\n"), headers: ndjson)
        #expect(batch.status == 200, "\(batch.body)")
        let answer = try JSONSerialization.jsonObject(with: Data(batch.body.utf8)) as! [String: Any]
        #expect(
            (answer["errors"] as? [[String: Any]])?.compactMap { $0["line"] as? Int } == [7, 8, 9], "\(batch.body)")
        let taken = try server.call(
            "POST", "/v1/responses",
            body: #"{"request":"gate","device":"truck-18","action":"ok","time":"2030-01-01T00:00:00Z"}"#)
        #expect(taken.status == 200, "\(taken.body)")
        #expect(
            taken.body
                == #"{"time":"2026-03-02T08:01:50Z","request":"gate","device":"truck-18","trigger":"region","event":"response","respondsTo":5,"action":"ok","options":[]}"#,
            "applied at the clock, the body's time ignored")
        let unknown = try server.call("POST", "/v1/responses", body: #"{"seq":5,"action":"reply","text":"x"}"#)
        #expect(unknown.status == 422 && unknown.body.contains(#""code":"invalid_response""#), "\(unknown.body)")
        let text = try server.call("POST", "/v1/responses", body: #"{"seq":5,"action":"ok","text":"x"}"#)
        #expect(text.status == 422 && text.body.contains(#""field":"text""#), "\(text.body)")
        #expect(try server.call("POST", "/v1/responses", body: #"{"seq":999,"action":"ok"}"#).status == 404)
        #expect(try server.call("POST", "/v1/responses", body: #"{"seq":0,"action":"ok"}"#).status == 422)
        #expect(try server.call("POST", "/v1/responses", body: #"{"seq":5}"#).status == 422)
        #expect(try server.call("POST", "/v1/responses", body: "[]").status == 422, "valid JSON, not a response")
        #expect(try server.call("DELETE", "/v1/delivered/gate").status == 200)
        // As DELETE /v1/requests/{id}: nothing left to remove is a 404.
        let again = try server.call("DELETE", "/v1/delivered/gate")
        #expect(again.status == 404 && again.body.contains(#""code":"not_found""#), "\(again.body)")
        let removed = try server.call("POST", "/v1/responses", body: #"{"seq":5,"action":"ok"}"#)
        #expect(removed.status == 404, "a removed notification cannot be answered: \(removed.body)")
        let delivered = try server.call("GET", "/v1/delivered").body
        #expect(delivered.contains(#""response":{"action":"dismiss","time":"2026-03-02T08:01:40Z"}"#), "\(delivered)")
        #expect(
            try server.call("POST", "/v1/readings", body: lines[11...].joined(separator: "\n"), headers: ndjson).status
                == 200)
        let log = try server.call("GET", "/v1/events").body
        #expect(log.contains(#""event":"response","respondsTo":5,"action":"ok""#), "\(log)")

        try Self.expectExportReplays(server, to: log, triggers: "\(scenario)/triggers.json", in: directory)
        let kept = try server.call("GET", "/v1/delivered").body
        server.stop()
        server = try Server(triggers: "\(scenario)/triggers.json", directory: directory)
        defer { server.stop() }
        #expect(try server.call("GET", "/v1/events").body == log, "kept across a restart")
        #expect(try server.call("GET", "/v1/delivered").body == kept, "responses kept across a restart")
    }

    @Test func categoriesAreReplacedLiveAndReplayed() throws {
        let scenario = "Data/scenarios/categories-in-events"
        let directory = try CLI.temporaryDirectory()
        var server = try Server(triggers: "\(scenario)/triggers.json", directory: directory)
        let listed = try server.call("GET", "/v1/categories")
        #expect(listed.status == 200 && listed.body.contains(#""id":"arrival""#), "\(listed.body)")
        let late =
            #"{"content":{"title":"late","category":"late"},"trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":150,"hysteresis":"naive"}}"#
        let unknown = try server.call("PUT", "/v1/requests/yard", body: late)
        #expect(unknown.status == 422 && unknown.body.contains(#""field":"content.category""#), "\(unknown.body)")
        let onlyLate = #"{"categories":[{"id":"late","actions":[{"id":"why","title":"Why?","textInput":{}}]}]}"#
        let inUse = try server.call("PUT", "/v1/categories", body: onlyLate)
        #expect(inUse.status == 409 && inUse.body.contains("category_in_use") && inUse.body.contains("dock"))
        #expect(try server.call("PUT", "/v1/requests/yard", body: late).status == 422, "the 409 changed nothing")
        let invalid = try server.call("PUT", "/v1/categories", body: #"{"categories":[{"id":"x","options":["loud"]}]}"#)
        #expect(
            invalid.status == 422 && invalid.body.contains(#""field":"categories[0].options[0]""#), "\(invalid.body)")
        #expect(try server.call("PUT", "/v1/categories", body: #"{"categories":7}"#).status == 422)
        let empty = try server.call(
            "PUT", "/v1/categories", body: #"{"categories":[{"id":"a","actions":[{"id":"","title":"t"}]}]}"#)
        #expect(empty.status == 422 && empty.body.contains(#""field":"categories[0].actions[0].id""#), "\(empty.body)")
        let both = try server.call(
            "PUT", "/v1/categories",
            body:
                #"{"categories":[{"id":"arrival","actions":[{"id":"ack","title":"OK"}]},{"id":"late","actions":[{"id":"why","title":"Why?","textInput":{}}]}]}"#
        )
        #expect(both.status == 200 && both.body.contains(#""id":"late""#), "\(both.body)")
        #expect(try server.call("PUT", "/v1/requests/yard", body: late).status == 201)
        let readings = try String(
            contentsOfFile: "\(Fixtures.packageRoot.path)/\(scenario)/readings.ndjson", encoding: .utf8)
        #expect(
            try server.call("POST", "/v1/readings", body: readings, headers: ["Content-Type: application/x-ndjson"])
                .status == 200)
        #expect(
            try server.call(
                "POST", "/v1/readings", body: #"{"op":"tick","time":"2026-03-02T08:01:00Z"}"#,
                headers: ["Content-Type: application/x-ndjson"]
            ).status == 200)
        let log = try server.call("GET", "/v1/events").body
        #expect(log.contains(#""request":"yard""#) && log.contains(#""title":"Why?""#), "\(log)")
        #expect(log.contains(#"{"id":"ack","title":"OK"}"#), "the dock's events carry the new actions: \(log)")

        try Self.expectExportReplays(server, to: log, triggers: "\(scenario)/triggers.json", in: directory)
        server.stop()
        server = try Server(triggers: "\(scenario)/triggers.json", directory: directory)
        defer { server.stop() }
        #expect(try server.call("GET", "/v1/categories").body == both.body, "kept across a restart")
        let bare = try server.call(
            "PUT", "/v1/categories",
            body: #"[{"id":"arrival","actions":[{"id":"ack","title":"OK"}]},{"id":"late","actions":[]}]"#)
        #expect(bare.status == 200 && bare.body.contains(#""id":"late","options":[]"#), "the array alone: \(bare.body)")
        #expect(try server.call("PUT", "/v1/requests/other", body: late).status == 201)
    }

    /// SIGTERM stops the services in reverse order: the checkpoint is written before the webhook
    /// outbox drains, so a kill during a long drain (a receiver that never answers in time) loses
    /// nothing and the next start replays nothing, with the undelivered events still queued.
    @Test func sigtermCheckpointsBeforeTheWebhookDrain() async throws {
        let scenario = "Data/scenarios/real-drive-visnjan"
        let directory = try CLI.temporaryDirectory()
        let info = ["FENCELINE_LOG_LEVEL": "info"]
        let server = try Server(triggers: "\(scenario)/triggers.json", directory: directory, environment: info)
        // Every delivery is answered after the sender's 10 s timeout.
        let receiver = try Receiver(
            in: directory, secret: "s", options: ["--chaos", "1", "--failure-share", "0", "--timeout-share", "1"])
        defer { receiver.stop() }
        let (log, receiverPort) = (receiver.log, receiver.port)
        let hook = try server.call(
            "POST", "/v1/webhooks", body: #"{"url":"http://127.0.0.1:\#(receiverPort)/","secret":"s"}"#)
        #expect(hook.status == 201, "\(hook.body)")
        let readings = try String(
            contentsOfFile: "\(Fixtures.packageRoot.path)/\(scenario)/readings.ndjson", encoding: .utf8)
        #expect(
            try server.call("POST", "/v1/readings", body: readings, headers: ["Content-Type: application/x-ndjson"])
                .status == 200)
        for _ in 0..<100 where ((try? String(contentsOf: log, encoding: .utf8)) ?? "").isEmpty {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(!((try? String(contentsOf: log, encoding: .utf8)) ?? "").isEmpty, "a delivery is in flight")

        kill(server.process.processIdentifier, SIGTERM)
        try await Task.sleep(for: .seconds(2))
        #expect(server.process.isRunning, "still draining the outbox")
        kill(server.process.processIdentifier, SIGKILL)
        server.process.waitUntilExit()

        let restarted = try Server(triggers: "\(scenario)/triggers.json", directory: directory, environment: info)
        defer { restarted.stop() }
        #expect(!restarted.startupLog.contains("replayed the journal"), "\(restarted.startupLog)")
        let listed = try restarted.call("GET", "/v1/webhooks").body
        let backlog = try #require(listed.firstMatch(of: /"backlog":(\d+)/).map { Int($0.1)! })
        #expect(backlog > 0, "the undelivered events are still queued: \(listed)")
        // Without them the stop below would wait for a hanging try again.
        let id = try #require(listed.firstMatch(of: /"id":"(wh_[0-9a-f]+)"/)).1
        #expect(try restarted.call("DELETE", "/v1/webhooks/\(id)").status == 200)
        receiver.stop()
    }

    /// The WAL is copied into the database every megabyte while commits go on (SQLite's own
    /// checkpoint, inside a commit, would make one batch wait for it), for large batches and for
    /// single readings alike: it starts over within a few megabytes, where SQLite's automatic
    /// checkpoint (4,096 pages) would let it reach 16 MB. Copies race the commits, so a copy that
    /// finds the WAL past 3 MiB is finished on the writer: the bound is that, a copy's megabyte
    /// and what is committed while one runs. The writes are each enough to pass it if nothing
    /// were copied.
    @Test func theWALIsCopiedAsCommitsGoOn() throws {
        let scenario = "Data/scenarios/devices-scope"
        let directory = try CLI.temporaryDirectory()
        let server = try Server(triggers: "\(scenario)/triggers.json", directory: directory)
        defer { server.stop() }
        let wal = directory.appendingPathComponent("store/fenceline.sqlite-wal").path
        func walSize() throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int)
        }
        // 1,600 single readings (two pages each: 13 MB if nothing were copied), in one curl
        // (its config file), each its own commit.
        var time = 1_772_438_400
        var config = ""
        for index in 0..<1_600 {
            let line = #"{"device":"walker-\#(index % 10)","time":\#(time),"lat":52.37,"lon":4.89}"#
            if index % 10 == 9 { time += 1 }
            config += """
                url = "http://127.0.0.1:\(server.port)/v1/readings"
                header = "Authorization: Bearer t0ken"
                header = "Content-Type: application/x-ndjson"
                data-binary = "\(line.replacingOccurrences(of: "\"", with: "\\\""))"
                output = "/dev/null"
                write-out = "%{http_code}\\n"
                next

                """
        }
        let file = directory.appendingPathComponent("singles.curl")
        try config.write(to: file, atomically: true, encoding: .utf8)
        let singles = try CLI.run(["-s", "-K", file.path], executable: URL(fileURLWithPath: "/usr/bin/curl"))
        let codes = singles.stdout.split(separator: "\n")
        #expect(codes.count == 1_600 && codes.allSatisfy { $0 == "200" }, "\(singles.stdout.prefix(200))")
        let afterSingles = try walSize()
        #expect(afterSingles < 6 << 20, "after single readings the WAL holds \(afterSingles) bytes")

        let batch = directory.appendingPathComponent("batch.ndjson")
        for _ in 0..<24 {
            // 5,000 lines of about 100 bytes: half a megabyte.
            var lines: [String] = []
            for index in 0..<5_000 {
                let lat = 52.37 + Double(index % 50) / 111_320
                lines.append(
                    #"{"device":"truck-\#(index % 100)","time":\#(time),"lat":\#(lat),"lon":4.89,"accuracy":5}"#)
                if index % 100 == 99 { time += 1 }
            }
            try lines.joined(separator: "\n").write(to: batch, atomically: true, encoding: .utf8)
            let answer = try server.call(
                "POST", "/v1/readings", body: "@\(batch.path)", headers: ["Content-Type: application/x-ndjson"])
            #expect(answer.status == 200, "\(answer.body)")
        }
        let afterBatches = try walSize()
        #expect(afterBatches < 6 << 20, "after 12 MB of batches the WAL holds \(afterBatches) bytes")
    }

    /// Schemathesis's findings, kept: a path's other methods answer 405 with `Allow`, a bad query
    /// parameter or Last-Event-ID is a 400 naming it, and a request removed before the first
    /// reading is gone at once (its removal waits for the clock, as the add would).
    /// SPEC §12 over HTTP: DELETE /v1/devices/{id} forgets a device (its exit, reason `removed`,
    /// comes with the next reading), and a request with several problems is one 422 naming the
    /// first in `field` and every one, with its path, in the message.
    @Test func devicesAreForgottenAndEveryProblemIsNamed() throws {
        let scenario = "Data/scenarios/real-drive-visnjan"
        let server = try Server(triggers: "\(scenario)/triggers.json")
        defer { server.stop() }
        let readings = try String(
            contentsOfFile: "\(Fixtures.packageRoot.path)/\(scenario)/readings.ndjson", encoding: .utf8)
        let ndjson = ["Content-Type: application/x-ndjson"]
        #expect(try server.call("POST", "/v1/readings", body: readings, headers: ndjson).status == 200)
        #expect(try server.call("DELETE", "/v1/devices/nobody").status == 404)
        let removed = try server.call("DELETE", "/v1/devices/car")
        #expect(removed.status == 200 && removed.body.contains(#""removed":["car"]"#), "\(removed.body)")
        #expect(try server.call("GET", "/v1/devices/car").status == 404)
        #expect(try server.call("DELETE", "/v1/devices/car").status == 404, "already forgotten")
        let later = #"{"device":"van","time":"2020-12-18T06:30:00Z","lat":45.0,"lon":13.0}"#
        #expect(try server.call("POST", "/v1/readings", body: later, headers: ndjson).status == 200)
        let page = try server.call("GET", "/v1/events?limit=10000")
        let events = try #require(
            (try JSONSerialization.jsonObject(with: Data(page.body.utf8)) as? [String: Any])?["events"]
                as? [[String: Any]])
        let last = try #require(events.last)
        #expect(last["device"] as? String == "car" && last["request"] as? String == "home")
        #expect(last["event"] as? String == "exit" && last["reason"] as? String == "removed", "\(last)")
        #expect(last["time"] as? String == "2020-12-18T06:24:24Z", "at the clock of the DELETE")
        // The car's next reading is a first reading: its stay in home is a new visit.
        let again = #"{"device":"car","time":"2020-12-18T06:31:00Z","lat":45.2733349521,"lon":13.7139970623}"#
        #expect(try server.call("POST", "/v1/readings", body: again, headers: ndjson).status == 200)
        let device = try server.call("GET", "/v1/devices/car")
        #expect(device.status == 200, "\(device.body)")

        let proximity = #"{"trigger":{"type":"proximity","near":50,"far":10,"among":["t*g"],"maxAge":-1}}"#
        let invalid = try server.call("PUT", "/v1/requests/meet", body: proximity)
        #expect(invalid.status == 422, "\(invalid.body)")
        #expect(invalid.body.contains(#""field":"trigger.far""#), "\(invalid.body)")
        #expect(invalid.body.contains(#""message":"request \"meet\": far must be"#), "\(invalid.body)")
        #expect(
            invalid.body.contains("trigger.among[0]: ") && invalid.body.contains("trigger.maxAge: "), "\(invalid.body)")
        let filters =
            #"{"expires":"tomorrow","filters":{"maxSpeed":0},"trigger":{"type":"region","center":{"lat":45,"lon":13},"radius":50}}"#
        let both = try server.call("PUT", "/v1/requests/fast", body: filters)
        #expect(both.status == 422 && both.body.contains(#""field":"expires""#), "\(both.body)")
        #expect(both.body.contains("filters.maxSpeed: "), "\(both.body)")
        #expect(try server.call("GET", "/v1/requests/meet").status == 404, "nothing was added")
    }

    /// SPEC §11 read as a client reads it: path ids are percent-decoded, valid JSON of the wrong
    /// shape is a 422 (not a 400), an ingest answer always has `firstSeq` and `lastSeq` (null
    /// when the batch released no event), and a device's view lists every region and beacon
    /// request in its scope, outside ones too.
    @Test func pathIdsBodiesAndStandingsFollowTheContract() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("triggers.json")
        try #"""
        {"requests":[
          {"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100}},
          {"id":"yard","devices":["my phone"],"trigger":{"type":"region","center":{"lat":52.40,"lon":4.95},"radius":100,"repeats":false}},
          {"id":"theirs","devices":["someone else"],"trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100}},
          {"id":"dock","trigger":{"type":"beacon","uuid":"2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"}},
          {"id":"ping","trigger":{"type":"timeInterval","seconds":600}}]}
        """#.write(to: catalog, atomically: true, encoding: .utf8)
        let server = try Server(triggers: catalog.path, directory: directory)
        defer { server.stop() }
        let ndjson = ["Content-Type: application/x-ndjson"]
        let far = #"{"device":"my phone","time":"2026-03-02T08:00:00Z","lat":52.0,"lon":4.0}"#
        let quiet = try server.call("POST", "/v1/readings", body: far, headers: ndjson)
        #expect(quiet.status == 200)
        #expect(quiet.body.contains(#""firstSeq":null"#) && quiet.body.contains(#""lastSeq":null"#), "\(quiet.body)")

        let outside = try server.call("GET", "/v1/devices/my%20phone")
        #expect(outside.status == 200, "\(outside.body)")
        #expect(outside.body.contains(#""device":"my phone""#), "\(outside.body)")
        #expect(
            outside.body.contains(
                #""requests":[{"request":"gate","state":"outside"},{"request":"yard","state":"outside"},{"request":"dock","state":"outside"}]"#
            ),
            "\(outside.body)")
        let near = #"{"device":"my phone","time":"2026-03-02T08:00:10Z","lat":52.37,"lon":4.89}"#
        let later = #"{"device":"my phone","time":"2026-03-02T08:00:20Z","lat":52.37,"lon":4.89}"#
        // The enter waits for its instant to close: a later reading, or a tick (SPEC §11).
        let entered = try server.call("POST", "/v1/readings", body: near, headers: ndjson)
        #expect(entered.body.contains(#""firstSeq":null"#), "\(entered.body)")
        let ticked = try server.call("POST", "/v1/readings", body: #"{"op":"tick"}"#, headers: ndjson)
        #expect(ticked.body.contains(#""firstSeq":1,"lastSeq":1"#), "\(ticked.body)")
        #expect(try server.call("POST", "/v1/readings", body: later, headers: ndjson).status == 200)
        let inside = try server.call("GET", "/v1/devices/my%20phone")
        #expect(
            inside.body.contains(#"{"request":"gate","since":"2026-03-02T08:00:10Z","state":"inside"}"#)
                && inside.body.contains(#"{"request":"yard","state":"outside"}"#) && !inside.body.contains("theirs"),
            "\(inside.body)")
        // A stay no event told of (a first fix inside is silent, SPEC §4) is known since its fix.
        let first = #"{"device":"tablet","time":"2026-03-02T08:00:30Z","lat":52.37,"lon":4.89}"#
        #expect(try server.call("POST", "/v1/readings", body: first, headers: ndjson).status == 200)
        let silent = try server.call("GET", "/v1/devices/tablet")
        #expect(
            silent.body.contains(#"{"request":"gate","since":"2026-03-02T08:00:30Z","state":"inside"}"#),
            "\(silent.body)")

        // A pending request comes back as a catalog writes it, with its next trigger date; what
        // GET gives, PUT takes back unchanged.
        let gate = try server.call("GET", "/v1/requests/gate")
        #expect(
            gate.body.hasPrefix(
                #"{"id":"gate","content":{},"trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100,"#
            ),
            "\(gate.body)")
        #expect(gate.body.hasSuffix(#""expires":null,"nextTriggerDate":null}"#), "\(gate.body)")
        let ping = try server.call("GET", "/v1/requests/ping")
        #expect(ping.body.contains(#""trigger":{"type":"timeInterval","seconds":600,"#), "\(ping.body)")
        #expect(ping.body.hasSuffix(#""nextTriggerDate":"2026-03-02T08:10:00Z"}"#), "\(ping.body)")
        let listed = try server.call("GET", "/v1/requests")
        #expect(listed.body.hasPrefix(#"{"requests":[\#(gate.body),"#), "\(listed.body.prefix(300))")
        let back = try server.call("PUT", "/v1/requests/gate", body: gate.body)
        #expect(back.status == 200 && back.body == gate.body, "\(back.body)")

        let put = try server.call(
            "PUT", "/v1/requests/my%20req%2F1",
            body: #"{"id":"my req/1","trigger":{"type":"timeInterval","seconds":60}}"#)
        #expect(put.status == 201, "\(put.body)")
        #expect(try server.call("GET", "/v1/requests/my%20req%2F1").status == 200)
        #expect(try server.call("GET", "/v1/requests").body.contains(#""id":"my req/1""#))
        #expect(try server.call("DELETE", "/v1/requests/my%20req%2F1").status == 200)
        #expect(try server.call("GET", "/v1/requests/my%20req%2F1").status == 404)

        for (method, path, body) in [
            ("PUT", "/v1/requests/z", "[]"), ("PUT", "/v1/requests/z", #""x""#), ("POST", "/v1/webhooks", "[1]"),
            ("POST", "/v1/responses", "7"), ("PUT", "/v1/categories", "true"),
        ] {
            let answer = try server.call(method, path, body: body)
            #expect(
                answer.status == 422 && answer.body.contains("invalid_request"),
                "\(method) \(path) \(body): \(answer.status) \(answer.body)")
        }
        #expect(try server.call("PUT", "/v1/requests/z", body: "{").status == 400, "not JSON at all")

        // yard fires once for its one device, then is pending no more: the view drops it too.
        let yard = #"{"device":"my phone","time":"2026-03-02T08:00:30Z","lat":52.40,"lon":4.95}"#
        let after = #"{"device":"my phone","time":"2026-03-02T08:00:40Z","lat":52.40,"lon":4.95}"#
        #expect(try server.call("POST", "/v1/readings", body: yard + "\n" + after, headers: ndjson).status == 200)
        #expect(try server.call("GET", "/v1/requests/yard").status == 404)
        let done = try server.call("GET", "/v1/devices/my%20phone")
        #expect(!done.body.contains(#""request":"yard""#) && done.body.contains(#""request":"gate""#), "\(done.body)")
    }

    @Test func methodsParametersAndRemovalsBeforeTheClock() throws {
        let server = try Server(triggers: "Data/scenarios/real-drive-visnjan/triggers.json")
        defer { server.stop() }
        let patch = try server.call("PATCH", "/v1/requests")
        #expect(patch.status == 405 && patch.body.contains("method_not_allowed"), "\(patch.body)")
        #expect(try server.call("TRACE", "/v1/webhooks/x").status == 405)
        #expect(try server.call("GET", "/v1/nothing").status == 404)
        let limit = try server.call("GET", "/v1/events?limit=0")
        #expect(limit.status == 400 && limit.body.contains(#""field":"limit""#), "\(limit.body)")
        // SPEC §11 sets no largest limit: a larger one is served as a page of at most 10,000.
        #expect(try server.call("GET", "/v1/events?limit=1000000").status == 200)
        let untyped = try server.call("POST", "/v1/readings", body: "", headers: ["Content-Type:"])
        #expect(untyped.status == 415 && untyped.body.contains("unsupported_media_type"), "\(untyped.body)")
        let ndjson = try server.call("POST", "/v1/readings", body: "", headers: ["Content-Type: application/ndjson"])
        #expect(ndjson.status == 200, "application/ndjson is NDJSON too: \(ndjson.body)")
        #expect(try server.call("GET", "/v1/events?after=x").status == 400)
        #expect(try server.call("GET", "/v1/devices?limit=0").status == 400)
        #expect(try server.call("GET", "/v1/events/stream", headers: ["Last-Event-ID: abc"]).status == 400)

        #expect(try server.call("GET", "/v1/requests/home").status == 200)
        #expect(try server.call("DELETE", "/v1/requests/home").status == 200)
        #expect(try server.call("GET", "/v1/requests/home").status == 404, "removed, though the clock is not set yet")
        #expect(try server.call("DELETE", "/v1/requests/home").status == 404)
        let all = try server.call("GET", "/v1/requests")
        #expect(!all.body.contains(#""id":"home""#))
    }

    /// A client whose body stalls is cut off after --idle-timeout, and holds nothing meanwhile:
    /// another client's batch is answered at once.
    @Test func aStalledBodyIsCutOff() throws {
        let server = try Server(
            triggers: "Data/scenarios/real-drive-visnjan/triggers.json", arguments: ["--idle-timeout", "1"])
        defer { server.stop() }
        let socket = try Socket(port: server.port)
        try socket.send(
            "POST /v1/readings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t0ken\r\n"
                + "Content-Type: application/x-ndjson\r\nContent-Length: 1000\r\n\r\n{\"device\":")
        let started = Date()
        let other = try server.call(
            "POST", "/v1/readings", body: #"{"device":"car","time":1,"lat":45.27,"lon":13.71}"#,
            headers: ["Content-Type: application/x-ndjson"])
        #expect(other.status == 200)
        #expect(Date().timeIntervalSince(started) < 1, "the stalled client holds nothing")
        #expect(socket.waitForClose(seconds: 5), "the stalled connection is closed")
        #expect(Date().timeIntervalSince(started) >= 0.9)
    }

    /// A tick years ahead of a repeating timer would release billions of events: the batch is
    /// refused whole (422, nothing applied) in bounded time and memory, and the service goes on.
    @Test func aClockJumpTooBigForOneBatchIsRefused() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("ping.json").path
        try #"{"requests":[{"id":"ping","trigger":{"type":"timeInterval","seconds":60,"repeats":true}}]}"#.write(
            toFile: catalog, atomically: true, encoding: .utf8)
        let server = try Server(triggers: catalog, directory: directory)
        defer { server.stop() }
        let ndjson = "Content-Type: application/x-ndjson"
        let first = #"{"device":"d","time":"2026-03-02T08:00:00Z","lat":1,"lon":1}"#
        #expect(try server.call("POST", "/v1/readings", body: first, headers: [ndjson]).status == 200)
        let started = Date()
        let jump = try server.call(
            "POST", "/v1/readings", body: first + "\n" + #"{"op":"tick","time":"9999-12-31T23:59:59Z"}"#,
            headers: [ndjson])
        #expect(jump.status == 422, "\(jump.body)")
        #expect(jump.body.contains(#""code":"too_many_events""#) && jump.body.contains(#""line":2"#))
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(try server.call("GET", "/v1/events").body == #"{"events":[],"next":0}"#, "nothing applied")
        let next = #"{"device":"d","time":"2026-03-02T08:02:30Z","lat":1,"lon":1}"#
        let answer = try server.call("POST", "/v1/readings", body: next, headers: [ndjson])
        #expect(answer.status == 200 && answer.body.contains(#""lastSeq":2"#), "\(answer.body)")
    }

    /// A raw TCP client on loopback, for what curl will not do (stall mid-body).
    final class Socket {
        let descriptor: Int32

        init(port: Int) throws {
            descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { throw CLIFailure(message: "connect failed: \(errno)") }
        }

        deinit { close(descriptor) }

        func send(_ text: String) throws {
            let bytes = Array(text.utf8)
            guard Glibc.send(descriptor, bytes, bytes.count, 0) == bytes.count else {
                throw CLIFailure(message: "send failed")
            }
        }

        /// Reads what has come (waiting for some): the bytes read, 0 at the end, -1 on an error.
        func receive() -> Int {
            var buffer = [UInt8](repeating: 0, count: 4096)
            return recv(descriptor, &buffer, buffer.count, 0)
        }

        /// Whether the peer closes the connection within `seconds` (read gives 0 or an error).
        func waitForClose(seconds: Double) -> Bool {
            var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let deadline = Date().addingTimeInterval(seconds)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline {
                guard Glibc.poll(&poll, 1, 100) > 0 else { continue }
                if recv(descriptor, &buffer, buffer.count, 0) <= 0 { return true }
            }
            return false
        }
    }

    /// `--triggers` on a restart adds (journaled, so the export replays it) only the requests
    /// the store does not have as they are: the same file again changes nothing.
    @Test func triggersOnARestartAddOnlyWhatChanged() throws {
        let directory = try CLI.temporaryDirectory()
        func catalog(_ seconds: Int, _ name: String) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try """
            {"requests":[{"id":"ping","trigger":{"type":"timeInterval","seconds":\(seconds),"repeats":true}},
                         {"id":"same","trigger":{"type":"timeInterval","seconds":600,"repeats":true}}]}
            """.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let first = try catalog(60, "first.json")
        let second = try catalog(120, "second.json")
        var server = try Server(triggers: first, directory: directory)
        let reading = #"{"device":"d","time":"2026-03-02T08:00:00Z","lat":1,"lon":1}"#
        #expect(
            try server.call("POST", "/v1/readings", body: reading, headers: ["Content-Type: application/x-ndjson"])
                .status == 200)
        server.stop()
        server = try Server(triggers: second, directory: directory)
        let ping = try server.call("GET", "/v1/requests/ping")
        #expect(ping.body.contains(#""nextTriggerDate":"2026-03-02T08:02:00Z""#), "\(ping.body)")
        let export = try server.call("GET", "/v1/export").body
        #expect(
            export.components(separatedBy: #""op":"add""#).count == 2, "one add, for the changed request: \(export)")
        server.stop()
        server = try Server(triggers: second, directory: directory, environment: ["FENCELINE_LOG_LEVEL": "info"])
        defer { server.stop() }
        #expect(try server.call("GET", "/v1/export").body == export, "the same file again adds nothing")
        // Without decoding it (a large catalog's decoding was most of a restart).
        #expect(
            server.startupLog.contains("--triggers is the file last applied: not read again"), "\(server.startupLog)")
    }

    /// The paths and methods of `openapi.yaml` (a line scan: two-space paths, four-space methods).
    static func documentedOperations() throws -> [(method: String, path: String, statuses: [Int])] {
        let text = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("Sources/FencelineService/openapi.yaml"),
            encoding: .utf8)
        var operations: [(method: String, path: String, statuses: [Int])] = []
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("components:") {
                path = nil
            } else if let path, let match = line.wholeMatch(of: /\ {4}(get|put|post|delete):/) {
                operations.append((String(match.1).uppercased(), path, []))
            } else if path != nil, !operations.isEmpty, let match = line.firstMatch(of: /^        "(\d{3})":/) {
                operations[operations.count - 1].statuses.append(Int(match.1)!)
            }
        }
        return operations
    }

    /// Every operation `openapi.yaml` describes is served, answers one of its documented statuses,
    /// and `/openapi.yaml` serves the file in the repository.
    @Test func theServerMatchesItsOpenAPIDescription() throws {
        let server = try Server(triggers: "Data/scenarios/real-drive-visnjan/triggers.json")
        defer { server.stop() }
        let operations = try Self.documentedOperations()
        #expect(operations.count >= 19)
        for operation in operations {
            let path = operation.path.replacingOccurrences(of: "{id}", with: "home")
            let body: String? =
                switch (operation.method, operation.path) {
                case ("POST", "/v1/readings"): #"{"device":"car","time":1,"lat":45.27,"lon":13.71}"#
                case ("PUT", _): #"{"trigger":{"type":"timeInterval","seconds":120,"repeats":true}}"#
                case ("POST", "/v1/webhooks"): #"{"url":"http://127.0.0.1:9/hook","secret":"s"}"#
                default: nil
                }
            let headers = operation.path == "/v1/readings" ? ["Content-Type: application/x-ndjson"] : []
            let answer: (status: Int, body: String)
            if operation.path == "/v1/events/stream" {
                let result = try CLI.run(
                    [
                        "-s", "-N", "--max-time", "1", "-o", "/dev/null", "-w", "%{http_code}", "-H",
                        "Authorization: Bearer t0ken",
                        "http://127.0.0.1:\(server.port)\(path)",
                    ], executable: URL(fileURLWithPath: "/usr/bin/curl"))
                answer = (Int(result.stdout) ?? 0, "")
            } else {
                answer = try server.call(operation.method, path, body: body, headers: headers)
            }
            #expect(
                operation.statuses.contains(answer.status),
                "\(operation.method) \(operation.path) answered \(answer.status), documented \(operation.statuses)")
            if answer.status >= 400 {
                #expect(answer.body.contains(#""error":{"#), "\(operation.method) \(operation.path): \(answer.body)")
            }
        }
        let served = try server.call("GET", "/openapi.yaml")
        let file = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("Sources/FencelineService/openapi.yaml"),
            encoding: .utf8)
        #expect(served.body.trimmingCharacters(in: .newlines) == file.trimmingCharacters(in: .newlines))
    }
}
