import Foundation
import TestSupport
import Testing

/// `fenceline next`, `--state-out` and `--format apns` end to end.
@Suite(.serialized) struct NotificationCommandTests {
    static let catalog = #"""
        {"requests":[
          {"id":"shift","trigger":{"type":"calendar","timeZone":"Europe/Amsterdam","dateComponents":{"weekday":2,"hour":8,"minute":0},"repeats":true}},
          {"id":"nyc","trigger":{"type":"calendar","timeZone":"America/New_York","dateComponents":{"hour":2,"minute":30}}},
          {"id":"ping","content":{"title":"Ping"},"trigger":{"type":"timeInterval","seconds":300,"repeats":true}},
          {"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":150}}
        ]}
        """#

    func catalogFile() throws -> URL {
        let url = try CLI.temporaryDirectory().appendingPathComponent("catalog.json")
        try Data(Self.catalog.utf8).write(to: url)
        return url
    }

    /// A `setCategories` record mid-stream: the events after it carry the new actions, and the
    /// output is the same with two threads and cut by a checkpoint.
    @Test func setCategoriesMidStreamRunsTheSameEveryWay() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("catalog.json").path
        try #"""
        {"categories":[{"id":"arrival","actions":[{"id":"ack","title":"Acknowledge"}]}],
         "requests":[{"id":"gate","content":{"title":"{device}","category":"arrival"},
                      "trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":150,"hysteresis":"naive"}}]}
        """#.write(toFile: catalog, atomically: true, encoding: .utf8)
        var lines: [String] = []
        for step in 0..<40 {
            let time = 1_772_438_400 + step * 30
            if step == 20 {
                lines.append(
                    #"{"op":"setCategories","categories":[{"id":"arrival","actions":[{"id":"ok","title":"OK"}]},{"id":"late","actions":[]}]}"#
                )
                lines.append(
                    #"{"op":"add","request":{"id":"yard","content":{"title":"y","category":"late"},"trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100,"hysteresis":"naive"}}}"#
                )
            }
            for device in 0..<6 {
                let lat = (step / 3 + device) % 2 == 0 ? 52.37 : 52.375
                lines.append(#"{"device":"d\#(device)","time":\#(time),"lat":\#(lat),"lon":4.89}"#)
            }
        }
        let readings = directory.appendingPathComponent("readings.ndjson").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: readings, atomically: true, encoding: .utf8)
        let one = try CLI.run(["run", "--quiet", "--triggers", catalog, readings])
        #expect(one.status == 0 && one.stderr.isEmpty, "\(one.stderr)")
        #expect(one.stdout.contains(#""actions":[{"id":"ack","title":"Acknowledge"}]"#))
        #expect(one.stdout.contains(#""actions":[{"id":"ok","title":"OK"}]"#))
        #expect(one.stdout.contains(#""request":"yard""#))
        let two = try CLI.run(["run", "--quiet", "--threads", "2", "--triggers", catalog, readings])
        #expect(two.stdout == one.stdout)
        for cut in [lines.count / 3, 121, 122] {
            let head = directory.appendingPathComponent("head.ndjson").path
            let tail = directory.appendingPathComponent("tail.ndjson").path
            try (lines[..<cut].joined(separator: "\n") + "\n").write(toFile: head, atomically: true, encoding: .utf8)
            try (lines[cut...].joined(separator: "\n") + "\n").write(toFile: tail, atomically: true, encoding: .utf8)
            let state = directory.appendingPathComponent("state.ckpt").path
            let first = try CLI.run(["run", "--quiet", "--triggers", catalog, "--checkpoint", state, head])
            let second = try CLI.run(["run", "--quiet", "--resume", state, tail])
            #expect(second.status == 0, "\(second.stderr)")
            #expect(first.stdout + second.stdout == one.stdout, "cut before line \(cut + 1)")
        }
    }

    @Test func nextPrintsEachRequestsNextTriggerDate() throws {
        let result = try CLI.run(["next", try catalogFile().path, "--after", "2026-03-07T12:00:00Z"])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                {"request":"shift","trigger":"calendar","next":"2026-03-09T07:00:00Z"}
                {"request":"nyc","trigger":"calendar","next":"2026-03-08T07:00:00Z"}
                {"request":"ping","trigger":"timeInterval","next":"2026-03-07T12:05:00Z"}
                {"request":"gate","trigger":"region","next":null}

                """)
        let text = try CLI.run(["next", try catalogFile().path, "--after", "2026-03-07T12:00:00Z", "--format", "text"])
        #expect(
            text.stdout.contains("nyc             calendar      2026-03-08T07:00:00Z  (Sun 2026-03-08 03:00:00 EDT)"))
        #expect(text.stdout.contains("gate            region        on readings"))
        // `next` writes dates, not events: only its own two formats are offered and accepted.
        for format in ["apns", "geojson"] {
            #expect(try CLI.run(["next", try catalogFile().path, "--format", format]).status == 64)
        }
        #expect(try CLI.run(["next", "--help"]).stdout.contains("(values: ndjson, text;"))
        #expect(try CLI.run(["next", "missing.json"]).status == 66)
    }

    /// SPEC §7: for a request with a schedule, `next` prints the first date at which it would fire
    /// inside a window, which is when `run` fires it; one already due fires at once.
    @Test func nextAgreesWithRunOnScheduledRequests() throws {
        let mondayMorning = #"{"timeZone":"UTC","windows":[{"days":["mon"],"start":"09:00","end":"10:00"}]}"#
        let nights = #"{"timeZone":"Europe/Amsterdam","windows":[{"days":["fri"],"start":"22:00","end":"02:00"}]}"#
        let catalog = """
            {"requests":[
              {"id":"half-past","schedule":\(mondayMorning),
               "trigger":{"type":"calendar","dateComponents":{"minute":30},"repeats":true}},
              {"id":"once-at-half-past","schedule":\(mondayMorning),
               "trigger":{"type":"calendar","dateComponents":{"minute":30}}},
              {"id":"hourly","schedule":\(nights),
               "trigger":{"type":"timeInterval","seconds":3600,"repeats":true,"start":"2026-03-01T00:10:00Z"}},
              {"id":"one-shot","schedule":\(mondayMorning),"trigger":{"type":"timeInterval","seconds":600}},
              {"id":"every-7-min","schedule":\(nights),"trigger":{"type":"timeInterval","seconds":420,"repeats":true}},
              {"id":"open-now","schedule":{"timeZone":"UTC","windows":[{"days":["sun"],"start":"00:00","end":"23:59"}]},
               "trigger":{"type":"timeInterval","seconds":120}},
              {"id":"never-inside","schedule":\(mondayMorning),
               "trigger":{"type":"calendar","dateComponents":{"hour":11,"minute":0},"repeats":true}},
              {"id":"already-due","trigger":{"type":"timeInterval","seconds":300,"start":"2026-02-28T23:00:00Z"}},
              {"id":"already-due-hourly",
               "trigger":{"type":"timeInterval","seconds":3600,"repeats":true,"start":"2026-02-28T20:10:00Z"}}
            ]}
            """
        let directory = try CLI.temporaryDirectory()
        let catalogURL = directory.appendingPathComponent("scheduled.json")
        try Data(catalog.utf8).write(to: catalogURL)
        let start = "2026-03-01T00:00:00Z"
        let next = try CLI.run(["next", catalogURL.path, "--after", start])
        #expect(next.status == 0)
        var predicted: [String: String] = [:]
        for line in next.stdout.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            predicted[object["request"] as! String] = object["next"] as? String ?? "never"
        }
        #expect(
            predicted == [
                "half-past": "2026-03-02T09:30:00Z", "once-at-half-past": "2026-03-02T09:30:00Z",
                "hourly": "2026-03-06T21:10:00Z", "one-shot": "2026-03-02T09:00:00Z",
                "every-7-min": "2026-03-06T21:03:00Z", "open-now": "2026-03-01T00:02:00Z", "never-inside": "never",
                // Due before --after: they fire as they are added.
                "already-due": start, "already-due-hourly": start,
            ])
        let run = try CLI.run(
            ["run", "--triggers", catalogURL.path, "--until", "2026-03-15T00:00:00Z", "--quiet", "-"],
            stdin: #"{"op":"tick","time":"\#(start)"}"# + "\n")
        #expect(run.status == 0)
        var fired: [String: String] = [:]
        for line in run.stdout.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let request = object["request"] as! String
            if fired[request] == nil { fired[request] = object["time"] as? String }
        }
        #expect(fired == predicted.filter { $0.value != "never" })
    }

    @Test func stateOutListsPendingAndDelivered() throws {
        let catalog = try catalogFile()
        let directory = catalog.deletingLastPathComponent()
        let readings = directory.appendingPathComponent("r.ndjson")
        try Data(
            """
            {"time":"2026-03-09T06:50:00Z","op":"tick"}
            {"time":"2026-03-09T07:01:00Z","op":"removeDelivered","ids":["shift"]}
            {"time":"2026-03-09T07:12:00Z","op":"tick"}

            """.utf8
        ).write(to: readings)
        let state = directory.appendingPathComponent("state.json")
        let result = try CLI.run([
            "run", "--triggers", catalog.path, readings.path, "--state-out", state.path, "--quiet",
        ])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: state)) as! [String: Any]
        #expect(object["clock"] as? String == "2026-03-09T07:12:00Z")
        let pending = (object["pending"] as! [[String: Any]]).map { "\($0["request"]!) \($0["next"] ?? "-")" }
        #expect(
            pending == [
                "shift 2026-03-16T07:00:00Z", "nyc 2026-03-10T06:30:00Z", "ping 2026-03-09T07:15:00Z", "gate <null>",
            ])
        let delivered = (object["delivered"] as! [[String: Any]]).map { "\($0["request"]!) \($0["time"]!)" }
        // Newest first; "shift" fired at 07:00 and was removed at 07:01.
        #expect(
            delivered == [
                "ping 2026-03-09T07:10:00Z", "ping 2026-03-09T07:05:00Z", "ping 2026-03-09T07:00:00Z",
                "ping 2026-03-09T06:55:00Z",
            ])
        #expect(try CLI.run(["run", "--triggers", catalog.path, readings.path, "--delivered-limit", "0"]).status == 64)
    }

    @Test func apnsFormatWritesRequestBodies() throws {
        let result = try CLI.run([
            "run", "--triggers", "Data/scenarios/apns-output/triggers.json", "--format", "apns", "--quiet",
            "Data/scenarios/apns-output/readings.ndjson",
        ])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let object = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        #expect(object["apns-collapse-id"] as? String == "depot")
        #expect(object["device"] as? String == "truck-17")
        let payload = object["payload"] as! [String: Any]
        #expect((payload["aps"] as! [String: Any])["thread-id"] as? String == "depot")
    }
}
