import Fenceline
import FencelineFormats
import TestSupport
import Testing

@Suite struct NDJSONReadingDecoderTests {
    let decoder = NDJSONReadingDecoder(
        requests: NDJSONReadingDecoder.RequestContext(
            decoder: CatalogDecoder(), catalog: Catalog(categories: [NotificationCategory(id: "arrival")])))

    func decode(_ line: String) throws(LineError) -> Reading? {
        let bytes = Array(line.utf8)
        return try bytes.withUnsafeBufferPointer { buffer throws(LineError) in try decoder.decode(buffer) }
    }

    func failure(_ line: String) -> LineError? {
        do {
            _ = try decode(line)
            return nil
        } catch {
            return error
        }
    }

    @Test func fixWithEveryField() throws {
        let reading = try decode(
            #"{"device":"truck-17","time":"2026-03-02T09:00:00.25+01:00","lat":52.3712,"lon":4.8951,"accuracy":8,"speed":3.5,"heading":90,"altitude":-2,"extra":{"nested":[1,{"a":"}"}]}}"#
        )
        #expect(
            reading
                == .fix(
                    Fix(
                        device: "truck-17", time: Timestamp(rfc3339: "2026-03-02T08:00:00.25Z")!,
                        coordinate: Coordinate(latitude: 52.3712, longitude: 4.8951), accuracy: 8, speed: 3.5,
                        heading: 90, altitude: -2)))
    }

    @Test func unixSecondsAreExactToTheMicrosecond() throws {
        guard case .fix(let fix)? = try decode(#"{"device":"p","time":1772438400.25,"lat":0,"lon":0}"#) else {
            Issue.record("no fix"); return
        }
        #expect(fix.time.microseconds == 1_772_438_400_250_000)
        guard case .fix(let early)? = try decode(#"{"device":"p","time":-1.5,"lat":0,"lon":0}"#) else {
            Issue.record("no fix"); return
        }
        #expect(early.time.microseconds == -1_500_000)
    }

    @Test func blankLinesAreNotReadings() throws {
        #expect(try decode("   ") == nil)
        #expect(try decode("") == nil)
    }

    @Test(arguments: [
        (#"{"time":"2026-03-02T08:00:00Z","lat":1,"lon":2}"#, "device", "missing"),
        (#"{"device":"a","lat":1,"lon":2}"#, "time", "missing"),
        (#"{"device":"a","time":"2026-03-02T08:00:00Z","lon":2}"#, "lat", "missing"),
        (
            #"{"device":"a","time":"2026-03-02T08:00:00Z","lat":"52.3","lon":2}"#, "lat",
            "expected a number, found a string"
        ),
        (#"{"device":"a","time":"2026-03-02T08:00:00Z","lat":95,"lon":2}"#, "lat", "out of range"),
        (#"{"device":"a","time":"2026-03-02T08:00:00Z","lat":5,"lon":-180.5}"#, "lon", "not normalised"),
        (#"{"device":"a","time":"2026-03-02 25:00:00Z","lat":5,"lon":2}"#, "time", "not an RFC 3339 time"),
        (#"{"device":7,"time":"2026-03-02T08:00:00Z","lat":5,"lon":2}"#, "device", "expected a string"),
        (#"{"device":"a","time":"2026-03-02T08:00:00Z","lat":5,"lon":2,"accuracy":-1}"#, "accuracy", "≥ 0"),
        (#"{"device":"","time":"2026-03-02T08:00:00Z","lat":5,"lon":2}"#, "device", "empty"),
        (#"{"device":"a","time":"2026-03-02T08:00:00Z","lat":NaN,"lon":2}"#, "lat", "NaN, which is not a JSON number"),
    ])
    func badFieldsNameTheField(line: String, field: String, reason: String) {
        let error = failure(line)
        #expect(error?.field == field)
        #expect(error?.message.contains(reason) == true, "\(String(describing: error))")
    }

    @Test func invalidTextAndOverflowingNumbersNameTheirField() {
        // Found by fuzzing: repaired UTF-8 made different device ids equal, and ±Inf slipped through.
        var bytes = Array(#"{"device":"a"#.utf8) + [0xFF] + Array(#"b","time":1,"lat":1,"lon":1}"#.utf8)
        let invalid = bytes.withUnsafeMutableBufferPointer { buffer in
            Result { () throws(LineError) in try decoder.decode(UnsafeBufferPointer(buffer)) }
        }
        guard case .failure(let error) = invalid else { Issue.record("decoded invalid UTF-8"); return }
        #expect(error.field == "device")
        #expect(error.message.contains("not valid UTF-8"))
        #expect(failure(#"{"device":"\ud800","time":1,"lat":1,"lon":1}"#)?.message.contains("lone surrogate") == true)
        let huge = failure(#"{"device":"a","time":1,"lat":1,"lon":1,"speed":1e400}"#)
        #expect(huge?.field == "speed")
        #expect(huge?.message == "number out of range")
    }

    @Test func escapedMemberNamesAreTheNamesTheySpell() throws {
        let escaped = try decode(#"{"d\u0065vice":"a","\u0074ime":"2026-03-02T08:00:00Z","lat":1,"l\u006fn":2}"#)
        #expect(escaped == (try decode(#"{"device":"a","time":"2026-03-02T08:00:00Z","lat":1,"lon":2}"#)))
        let twice = failure(#"{"device":"a","time":1,"lat":1,"l\u0061t":2,"lon":1}"#)
        #expect(
            twice?.field == "lat" && twice?.message.contains("appears twice") == true, "\(String(describing: twice))")
    }

    @Test func ignoredMembersMustBeValidUTF8Too() {
        func decodeBytes(_ bytes: [UInt8]) -> LineError? {
            let result = bytes.withUnsafeBufferPointer { buffer in
                Result { () throws(LineError) in try decoder.decode(buffer) }
            }
            guard case .failure(let error) = result else { return nil }
            return error
        }
        let head = Array(#"{"device":"a","time":1,"lat":1,"lon":1,"note":""#.utf8)
        let tail = Array(#""}"#.utf8)
        #expect(decodeBytes(head + Array("café ✓ 🚚".utf8) + tail) == nil)
        for invalid: [UInt8] in [
            [0xFF], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x9C],
        ] {
            let error = decodeBytes(head + Array("ok".utf8) + invalid + tail)
            #expect(error?.message.contains("not valid UTF-8") == true, "\(invalid): \(String(describing: error))")
        }
    }

    @Test(arguments: [
        #"{"device":"a","time":"2026-03-02T08:00:00Z","lat":5,"#,
        #"[1,2,3]"#,
        #"{"device":"a"} trailing"#,
        "\u{0}\u{1}binary",
    ])
    func malformedLinesAreMalformed(line: String) {
        #expect(failure(line)?.code == .malformed)
    }

    /// The fast path matches a tracker's extras by name: a value missing after one must not
    /// let it read on from the next member's name.
    @Test(arguments: [
        #"{"device":"a","time":"2026-03-02T08:00:00Z","lat":5,"lon":2,"speed":,"heading":2}"#,
        #"{"device":"a","time":"2026-03-02T08:00:00Z","lat":5,"lon":2,"speed":1,"heading":,"battery":5}"#,
        #"{"device":"a","time":"2026-03-02T08:00:00Z","lat":5,"lon":2,"speed":1,"heading":2,"altitude":,"battery":5}"#,
        #"{"device":"a","time":"2026-03-02T08:00:00Z","lat":5,"lon":2,"speed":1,"battery":,"source":"gps"}"#,
        #"{"device":"a","time":"2026-03-02T08:00:00Z","lat":5,"lon":2,"battery":1,"source":}"#,
    ])
    func extrasWithAValueMissingAreRefused(line: String) {
        #expect(failure(line) != nil)
        let bytes = Array(line.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            #expect(decoder.canonicalParts(buffer, motion: true) == nil)
            #expect(decoder.canonicalParts(buffer, motion: false) == nil)
        }
    }

    @Test func controlRecords() throws {
        let remove = try decode(#"{"time":"2026-03-02T08:00:00Z","op":"removePending","ids":["a","b"]}"#)
        #expect(
            remove
                == .control(
                    ControlRecord(
                        time: Timestamp(rfc3339: "2026-03-02T08:00:00Z"), operation: .removePending(["a", "b"]))))
        #expect(try decode(#"{"op":"tick"}"#) == .control(ControlRecord(time: nil, operation: .tick)))
        #expect(
            try decode(#"{"op":"removeAllPending"}"#)
                == .control(ControlRecord(time: nil, operation: .removeAllPending)))
        guard
            case .control(let add)? = try decode(
                #"{"op":"add","request":{"id":"g","content":{"category":"arrival"},"trigger":{"type":"region","center":{"lat":1,"lon":2},"radius":5}}}"#
            ),
            case .add(let request) = add.operation
        else { Issue.record("no add"); return }
        #expect(request.id == "g")
        // A response by request names its device as the events do: null for an unscoped one.
        for (line, device) in [
            (#"{"op":"respond","request":"bell","device":null,"action":"default"}"#, nil),
            (#"{"op":"respond","request":"bell","action":"default"}"#, nil),
            (#"{"op":"respond","request":"gate","device":"d1","action":"default"}"#, "d1"),
        ] as [(String, String?)] {
            let response = NotificationResponse(
                target: .latest(request: line.contains("bell") ? "bell" : "gate", device: device), action: "default")
            #expect(try decode(line) == .control(ControlRecord(time: nil, operation: .respond(response))), "\(line)")
        }
        #expect(failure(#"{"op":"respond","request":"bell","device":7,"action":"default"}"#)?.field == "device")
        #expect(failure(#"{"op":"explode"}"#)?.field == "op")
        #expect(failure(#"{"op":"removePending"}"#)?.field == "ids")
        // removeDevice (SPEC §12): its devices, named, else a bad line naming the field.
        #expect(
            try decode(#"{"op":"removeDevice","devices":["truck-1"]}"#)
                == .control(ControlRecord(time: nil, operation: .removeDevice(["truck-1"]))))
        for bad in [
            #"{"op":"removeDevice"}"#, #"{"op":"removeDevice","devices":"truck-1"}"#,
            #"{"op":"removeDevice","devices":[7]}"#,
        ] {
            let error = failure(bad)
            #expect(error?.field == "devices", "\(bad)")
            #expect(
                error?.message.contains("removeDevice needs devices") == true, "\(bad): \(String(describing: error))")
        }
    }

    /// `setCategories` replaces the set an `add` may name, from the next line decoded on.
    @Test func setCategoriesChangesWhatAnAddMayName() throws {
        let add =
            #"{"op":"add","request":{"id":"g","content":{"category":"late"},"trigger":{"type":"timeInterval","seconds":60}}}"#
        #expect(failure(add)?.field == "request.content.category")
        guard
            case .control(let set)? = try decode(
                #"{"op":"setCategories","categories":[{"id":"late","actions":[{"id":"why","title":"Why?"}]}]}"#),
            case .setCategories(let categories) = set.operation
        else { Issue.record("no setCategories"); return }
        #expect(
            categories == [NotificationCategory(id: "late", actions: [NotificationAction(id: "why", title: "Why?")])])
        #expect(failure(add) == nil)
        let arrival =
            #"{"op":"add","request":{"id":"h","content":{"category":"arrival"},"trigger":{"type":"timeInterval","seconds":60}}}"#
        #expect(failure(arrival)?.field == "request.content.category", "arrival is gone")
        #expect(failure(#"{"op":"setCategories"}"#)?.field == "categories")
        #expect(failure(#"{"op":"setCategories","categories":[{"id":"a"},{"id":"a"}]}"#)?.field == "categories[1].id")
        #expect(failure(add) == nil, "a refused set changes nothing")
    }

    @Test func invalidAddedRequestIsABadLineNamingThePath() {
        let error = failure(
            #"{"op":"add","request":{"id":"g","trigger":{"type":"region","center":{"lat":1,"lon":2},"radius":-5}}}"#)
        #expect(error?.code == .invalidRequest)
        #expect(error?.field == "request.trigger.radius")
        let unknownCategory = failure(
            #"{"op":"add","request":{"id":"g","content":{"category":"nope"},"trigger":{"type":"timeInterval","seconds":5}}}"#
        )
        #expect(unknownCategory?.field == "request.content.category")
    }

    @Test func impossibleRSSIIsBadInputButNoReadingValuesAreNot() throws {
        let uuid = "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"
        let positive = failure(#"{"device":"s","time":1,"beacon":{"uuid":"\#(uuid)","major":1,"minor":1,"rssi":42}}"#)
        #expect(positive?.field == "beacon.rssi")
        #expect(positive?.message.contains("impossible") == true)
        #expect(
            try decode(#"{"device":"s","time":1,"beacon":{"uuid":"\#(uuid)","major":1,"minor":1,"rssi":127}}"#) != nil)
        #expect(
            try decode(#"{"device":"s","time":1,"beacon":{"uuid":"\#(uuid)","major":1,"minor":1,"rssi":0}}"#) != nil)
        #expect(
            failure(#"{"device":"s","time":1,"beacon":{"uuid":"nope","major":1,"minor":1,"rssi":-60}}"#)?.field
                == "beacon.uuid")
        #expect(
            failure(#"{"device":"s","time":1,"beacon":{"uuid":"\#(uuid)","major":70000,"minor":1,"rssi":-60}}"#)?.field
                == "beacon.major")
        let undashed = try decode(
            #"{"device":"s","time":1,"beacon":{"uuid":"2f234454cf6d4a0fadf2f4911ba9ffa6","major":1,"minor":1,"rssi":-60}}"#
        )
        guard case .sighting(let sighting)? = undashed else { Issue.record("no sighting"); return }
        #expect(sighting.beacon.uuid == uuid)
    }

    @Test func rawAdvertisementLines() throws {
        let hex = "0201061AFF4C0002152F234454CF6D4A0FADF2F4911BA9FFA600010007C5"
        guard case .sighting(let sighting)? = try decode(#"{"device":"gw","time":5,"adv":"\#(hex)","rssi":-70}"#) else {
            Issue.record("no sighting")
            return
        }
        #expect(sighting.beacon == BeaconIdentity(uuid: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", major: 1, minor: 7))
        #expect(sighting.txPower == -59)
        #expect(sighting.rssi == -70)
        #expect(failure(#"{"device":"gw","time":5,"adv":"\#(hex)"}"#)?.field == "rssi")
        #expect(failure(#"{"device":"gw","time":5,"adv":"02","rssi":-70}"#)?.field == "adv")
    }

    @Test func beaconSighting() throws {
        let reading = try decode(
            #"{"device":"phone-3","time":1772438400.25,"beacon":{"uuid":"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6","major":1,"minor":7,"rssi":-67,"txPower":-59}}"#
        )
        #expect(
            reading
                == .sighting(
                    BeaconSighting(
                        device: "phone-3", time: Timestamp(microseconds: 1_772_438_400_250_000),
                        beacon: BeaconIdentity(uuid: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", major: 1, minor: 7),
                        rssi: -67, txPower: -59)))
    }

    /// The byte-matching path for the common layout must read every line as the general parser
    /// does: a space after `{` sends the same line down the general path.
    /// The general decoder alone, without the fast path.
    func general(_ line: String) throws(LineError) -> Reading? {
        let bytes = Array(line.utf8)
        return try bytes.withUnsafeBufferPointer { buffer throws(LineError) in try decoder.decodeNonCanonical(buffer) }
    }

    /// Without converting speed, heading and altitude the fast path reads the same lines, with
    /// the same position, and leaves those three absent.
    func expectMotionSkippedAlike(_ buffer: UnsafeBufferPointer<UInt8>, _ line: String) {
        let full = decoder.canonicalParts(buffer)
        let skipped = decoder.canonicalParts(buffer, motion: false)
        #expect((full == nil) == (skipped == nil), "\(line)")
        guard let full, let skipped else { return }
        #expect(skipped.areMotionSkipped(from: full), "\(line)")
    }

    /// The fast path reads any member order, members it does not know, whitespace and Unix times
    /// as the general decoder does: on random lines of every layout a feed writes, and broken
    /// ones, whatever it reads is the general decoder's fix, and it reads most plain lines.
    @Test func theFastPathReadsEveryLayoutAsTheGeneralDecoderDoes() {
        var generator = SplitMix(state: 41)
        func pick(_ list: [String]) -> String { list[Int.random(in: 0..<list.count, using: &generator)] }
        let values: [String: [String]] = [
            // Names short and long around the eight bytes read at a time, with a byte the fast
            // path leaves to the full decoder early, late or last (a raw tab, DEL, non-ASCII).
            "device": [
                #""d1""#, #""truck-17""#, #""""#, #""caf\u00e9""#, #""ünï""#, "7", "null", #""a b""#,
                #""vehicle-0001234""#, #""vehicle-00012345""#, "\"a\tb\"", "\"vehicle-000\u{7F}\"",
                "\"vehicle-00012345é\"", "\"vehicle\t\"", #""vehicle-000123\"x""#,
            ],
            "time": [
                #""2026-03-02T08:00:00Z""#, #""2026-03-02T08:00:00.125+01:00""#, "1772438400", "1772438400.123",
                "-1.5", "1e9", "99999999999999", #""soon""#, "true", "null",
            ],
            "lat": ["52.37", "-0", "1e1", "91", "null", #""52""#, "-90"],
            "lon": ["4.89", "180", "-180.5", "0.0", "null"],
            "accuracy": ["8", "0", "-1", "12.5", "null", "1e400"],
            "speed": ["3.5", "0", "null", "-2", "-0.25", "1e2", "01", "1.", String(repeating: "9", count: 400)],
            "heading": ["90", "359.9", "null", "0.5", "-", #""90""#],
            "altitude": ["-2", "120.5", "1E-2", "-0"],
            // A skipped number long enough to overflow is refused by the full decoder.
            "battery": [
                "87", "-3", "0", "0.5", "00", #""low""#, "null", "[1,2]", #"{"v":3.7}"#,
                String(repeating: "9", count: 400),
            ],
            "source": [#""gps""#, #""w\"ifi""#, "false", "\"gps\u{1F}\"", #""network-provider""#, "\"ünï-provider\""],
            "op": [#""tick""#],
            "adv": [#""0201""#],
        ]
        let common = ["device", "time", "lat", "lon", "accuracy", "speed", "heading", "altitude", "battery", "source"]
        var read = 0
        var plain = 0
        for round in 0..<40000 {
            var names = common.filter { _ in Int.random(in: 0..<10, using: &generator) < 8 }
            names.shuffle(using: &generator)
            if round % 50 == 0 { names.append(pick(["op", "adv", "lat", "device"])) }  // a control, a sighting, twice
            let space = round % 7 == 0 ? " " : ""
            let members = names.map { name in
                #""\#(name)"\#(space):\#(space)\#(pick(values[name] ?? ["1"]))"#
            }
            var line = "{" + space + members.joined(separator: "," + space) + space + "}"
            switch round % 40 {
            case 0: line = String(line.dropLast(Int.random(in: 1...4, using: &generator)))
            case 1: line += " x"
            case 2: line = " " + line + " "
            default: break
            }
            let bytes = Array(line.utf8)
            let fast = bytes.withUnsafeBufferPointer { buffer in
                expectMotionSkippedAlike(buffer, line)
                return decoder.canonicalParts(buffer).map { $0.fix(in: buffer) }
            }
            let slow = Result { () throws(LineError) in try general(line) }
            if case .success(.fix) = slow, !line.contains("\\"), line.utf8.allSatisfy({ $0 < 0x7F }) { plain += 1 }
            guard let fast else { continue }
            read += 1
            guard case .success(let reading) = slow else {
                Issue.record("\(line): the fast path read \(fast), the general decoder refused it: \(slow)")
                continue
            }
            #expect(reading == .fix(fast), "\(line)")
        }
        #expect(read > 200 && read * 10 >= plain * 9, "read \(read) of \(plain) plain fixes")
    }

    @Test func canonicalLinesReadAsTheGeneralParserReadsThem() {
        var generator = SplitMix(state: 23)
        // JSON escapes (kept as written), non-ASCII, empty and long ids.
        let devices = [
            "d1", "truck-17", "", #"tab\tbed"#, #"caf\u00e9"#, "ünï", #"x\"y"#, String(repeating: "z", count: 40),
        ]
        let times = [
            "2026-03-02T08:00:00Z", "2026-03-02T08:00:00.125Z", "2026-03-02 09:00:00+01:00", "2026-03-02T08:00:60Z",
            "2026-02-30T08:00:00Z", "yesterday", "2026-03-02T08:00:00",
        ]
        // Short and long digit runs on both sides of the point (the fast reader's limits are 15
        // digits), exponents, leading zeros and broken numbers.
        let numbers = [
            "52.37", "-0", "4.8951", "1e2", "0.5E-1", "00.1", "1.", "-", "91", "-180", "180.0000001", "NaN", "1e400",
            "0", "-0.0", "0.000000000000001234", "12.34567890123456", "1.234567890123", "-89.99999999999999",
            "0.1000000000000000055511151231257827", "5e-324", "3.", ".5", "--1", "-01", "1.5e", "12.5E+1", "7.0e0",
            "179.9999999", "-179.999999999999", "45.123456789012345678",
        ]
        var canonical = 0
        defer { #expect(canonical > 50) }
        for _ in 0..<4000 {
            func pick(_ list: [String]) -> String { list[Int.random(in: 0..<list.count, using: &generator)] }
            var line =
                #"{"device":"\#(pick(devices))","time":"\#(pick(times))","lat":\#(pick(numbers)),"lon":\#(pick(numbers))"#
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: line += #","accuracy":\#(pick(numbers + ["-3", "12.5"]))"#
            case 1: line += #","speed":2"#
            default: break
            }
            // A tracker's extras, in their usual order or cut short, then members the engine skips.
            if Int.random(in: 0..<3, using: &generator) == 0 {
                line += #","speed":\#(pick(numbers)),"heading":\#(pick(numbers))"#
                if Bool.random(using: &generator) { line += #","altitude":\#(pick(numbers))"# }
                if Bool.random(using: &generator) {
                    line += #","battery":\#(pick(numbers + ["87", "100", "null", #""low""#, "[1]", ""]))"#
                }
                if Bool.random(using: &generator) {
                    line += pick([
                        #","source":"gps""#, #","source":"g\"ps""#, #","source":7"#, #","source":null"#,
                        #","source":"gps\#u{7F}""#, #","source":"""#,
                    ])
                }
                if Int.random(in: 0..<4, using: &generator) == 0 { line += #","battery":5"# }
            }
            line += Int.random(in: 0..<10, using: &generator) == 0 ? "} " : "}"
            let fast = Result { () throws(LineError) in try decode(line) }
            let slow = Result { () throws(LineError) in try general(line) }
            Array(line.utf8).withUnsafeBufferPointer { expectMotionSkippedAlike($0, line) }
            // The unwrapped fast path, which the run pipeline calls first, reads the same fix.
            if let fix = Array(line.utf8).withUnsafeBufferPointer({ decoder.canonicalFix($0) }) {
                canonical += 1
                if case .success(let reading) = slow {
                    #expect(reading == .fix(fix), "\(line)")
                } else {
                    Issue.record("\(line): canonical \(fix), general \(slow)")
                }
            }
            switch (fast, slow) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(line)")
            case (.failure(let a), .failure(let b)): #expect(a.field == b.field, "\(line)")
            default: Issue.record("\(line): \(fast) vs \(slow)")
            }
        }
    }
}
