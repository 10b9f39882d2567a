import Fenceline
import FencelineFormats
import Testing

/// Every validation rule of SPEC §2, reported with the request id and the JSON path.
@Suite struct CatalogDecoderTests {
    func decode(_ text: String) throws(CatalogError) -> CatalogDecoder.Decoded {
        try CatalogDecoder().decode(Array(text.utf8))
    }

    func issues(_ text: String) -> [CatalogIssue] {
        do {
            _ = try decode(text)
            return []
        } catch {
            return error.issues
        }
    }

    static let circle = #""trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":150}"#

    @Test(
        arguments: [
            (#"{"id":"a","trigger":{"type":"teleport"}}"#, "a", "requests[0].trigger.type", "unknown trigger type"),
            (
                #"{"id":"a","content":{"category":"nope"},"# + circle + "}", "a", "requests[0].content.category",
                "unknown category"
            ),
            (
                #"{"id":"a","trigger":{"type":"region","center":{"lat":52,"lon":4},"radius":0}}"#, "a",
                "requests[0].trigger.radius", "> 0"
            ),
            (
                #"{"id":"a","trigger":{"type":"region","center":{"lat":91,"lon":4},"radius":5}}"#, "a",
                "requests[0].trigger.center", "out of range"
            ),
            (
                #"{"id":"a","trigger":{"type":"region","geometry":{"type":"Polygon","coordinates":[[[4,52],[5,52],[181,53],[4,52]]]}}}"#,
                "a", "requests[0].trigger.geometry.coordinates[0][2]", "out of range"
            ),
            (
                #"{"id":"a","trigger":{"type":"region","geometry":{"type":"Polygon","coordinates":[[[4,52],[5,52],[5,53],[4,53]]]}}}"#,
                "a", "requests[0].trigger.geometry.coordinates[0]", "not closed"
            ),
            (
                #"{"id":"a","trigger":{"type":"region","geometry":{"type":"Polygon","coordinates":[[[4,52],[5,52],[4,52]]]}}}"#,
                "a", "requests[0].trigger.geometry.coordinates[0]", "at least 4 positions"
            ),
            (
                #"{"id":"a","trigger":{"type":"region","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}}}"#,
                "a", "requests[0].trigger.geometry.coordinates", "Self-intersection"
            ),
            (#"{"id":"a","trigger":{"type":"timeInterval","seconds":0}}"#, "a", "requests[0].trigger.seconds", "> 0"),
            (
                #"{"id":"a","trigger":{"type":"timeInterval","seconds":30,"repeats":true}}"#, "a",
                "requests[0].trigger.seconds", "at least 60 seconds"
            ),
            (#"{"trigger":{"type":"timeInterval","seconds":30}}"#, nil, "requests[0].id", "missing field \"id\""),
            (
                #"{"id":"a","trigger":{"type":"region","geometry":{"type":"LineString","coordinates":[[4,52],[5,52]]},"corridor":-1}}"#,
                "a", "requests[0].trigger.corridor", "> 0"
            ),
            (
                #"{"id":"a","trigger":{"type":"region","center":{"lat":52,"lon":4},"radius":5,"hysteresis":"sticky"}}"#,
                "a", "requests[0].trigger.hysteresis", "unknown hysteresis preset"
            ),
            (
                #"{"id":"a","trigger":{"type":"region","center":{"lat":52,"lon":4},"radius":"5"}}"#, "a",
                "requests[0].trigger.radius", "expected a number"
            ),
            (
                #"{"id":"a","trigger":{"type":"region","center":{"lat":52,"lon":4},"radius":5,"notifyOnDwell":true}}"#,
                "a", "requests[0].trigger.dwell", "needs dwell"
            ),
            (
                #"{"id":"a","trigger":{"type":"calendar","dateComponents":{"hour":25},"timeZone":"Mars/Olympus"}}"#,
                "a", "requests[0].trigger.dateComponents.hour", "0…23"
            ),
        ] as [(String, String?, String, String)])
    func eachRuleNamesTheRequestAndPath(request: String, id: String?, path: String, reason: String) {
        let found = issues(#"{"categories":[{"id":"arrival"}],"requests":["# + request + "]}")
        let issue = found.first { $0.path == path }
        #expect(issue != nil, "no issue at \(path) in \(found)")
        #expect(issue?.requestID == id)
        #expect(issue?.message.contains(reason) == true, "\(String(describing: issue))")
    }

    @Test func validateReportsEveryProblemAtOnce() {
        let found = issues(
            #"{"requests":[{"id":"a","trigger":{"type":"x"}},{"id":"b","trigger":{"type":"region","center":{"lat":1,"lon":1},"radius":-1}},{"trigger":{"type":"timeInterval","seconds":1}}]}"#
        )
        #expect(found.map(\.path) == ["requests[0].trigger.type", "requests[1].trigger.radius", "requests[2].id"])
    }

    /// A request without an id, or with a trigger that cannot be read, has the problems of its
    /// other members reported too (and nothing said of the stand-ins they are checked with).
    @Test func aRequestWithoutAnIdOrATriggerHasItsOtherProblemsReported() {
        let found = issues(
            #"{"categories":[{"id":"ok"}],"requests":[{"trigger":{"type":"region","center":{"lat":95,"lon":4},"radius":-5}},{"id":"d","content":{"category":"nope"},"trigger":{"type":"bogus"}},{"id":"e","content":{"category":"nope"}}]}"#
        )
        #expect(
            found.map(\.path) == [
                "requests[0].id", "requests[0].trigger.center", "requests[0].trigger.radius",
                "requests[1].trigger.type",
                "requests[1].content.category", "requests[2].trigger", "requests[2].content.category",
            ], "\(found.map(\.path))")
    }

    /// A circle whose centre cannot be read still has its other members' problems reported: a
    /// second unreadable coordinate, and a radius out of range.
    @Test func aCircleWithoutAReadableCentreHasItsOtherProblemsReported() {
        let found = issues(
            #"{"requests":[{"id":"a","trigger":{"type":"region","center":{"lat":"52","lon":"4"},"radius":-5}},{"id":"b","trigger":{"type":"region","center":{"lon":4},"radius":30000000}},{"id":"c","trigger":{"type":"region","center":{"lat":52,"lon":4},"radius":"x"}}]}"#
        )
        #expect(
            found.map(\.path) == [
                "requests[0].trigger.center.lat", "requests[0].trigger.center.lon", "requests[0].trigger.radius",
                "requests[1].trigger.center.lat", "requests[1].trigger.radius", "requests[2].trigger.radius",
            ], "\(found.map(\.path))")
        guard found.count == 6 else { return }
        #expect(found[2].message.contains("> 0"))
        #expect(found[4].message.contains("half the Earth"))
    }

    /// A trigger member that cannot be read hides nothing said of its other members: a
    /// self-intersecting polygon beside an unknown hysteresis preset is reported too.
    @Test func aTriggersMembersAreReportedApart() {
        let found = issues(
            #"{"requests":[{"id":"a","trigger":{"type":"region","geometry":{"type":"Polygon","coordinates":[[[4,52],[5,53],[5,52],[4,53],[4,52]]]},"hysteresis":"sticky"}}]}"#
        )
        #expect(
            found.map(\.path) == ["requests[0].trigger.hysteresis", "requests[0].trigger.geometry.coordinates"],
            "\(found.map(\.path))")
    }

    @Test func syntaxErrorsGiveLineAndColumn() {
        let found = issues("{\n  \"requests\": [\n    {\"id\": \"a\",,}\n  ]\n}")
        #expect(found.count == 1)
        #expect(found.first?.message.hasPrefix("line 3, column 16:") == true, "\(found)")
    }

    /// The request list is read one request at a time after a bracket-matching pass; a syntax
    /// error anywhere in it still gets the exact place and the message of a full parse.
    @Test(arguments: [
        (#"{"requests":[{"id":"a"} {"id":"b"}]}"#, "line 1, column 25: expected ',' or ']' in array, found an object"),
        (#"{"requests":[{"id":"a"]}"#, "line 1, column 23: expected ',' or '}' in object, found ']'"),
        (#"{"requests":[{"id":"a"},"#, "line 1, column 25: expected a value, found end of input"),
        (#"{"requests":[{"id":"a\x"}]}"#, "line 1, column 22: invalid escape \\x"),
        (#"{"requests":[]} 7"#, "line 1, column 17: unexpected a number after the JSON value"),
        (#"{"requests":[[[[1]]]]"#, "line 1, column 22: expected ',' or '}' in object, found end of line"),
        ("{\"requests\":[\n  {\"id\": \"a\",\n   \"x\": tru}]}", "line 3, column 9: expected true"),
    ])
    func syntaxErrorsInTheRequestListAreExact(text: String, message: String) {
        let found = issues(text)
        #expect(found.map(\.message) == [message])
    }

    @Test func categoriesAndDefaultsMayFollowTheRequests() throws {
        let decoded = try decode(
            #"{"requests":[{"id":"a","content":{"category":"visit"},"# + Self.circle
                + #"}],"categories":[{"id":"visit"}],"defaults":{"hysteresis":"naive"}}"#)
        guard case .region(let trigger) = decoded.catalog.requests.first?.trigger else {
            Issue.record("no region")
            return
        }
        #expect(trigger.hysteresis == .naive)
        #expect(decoded.catalog.categories.map(\.id) == ["visit"])
    }

    /// A member given twice (issue 26) leaves its meaning open: refused, not read as the last.
    @Test func aRepeatedRequestListIsRefused() throws {
        let found = issues(
            #"{"requests":[{"id":"first","# + Self.circle + #"}],"requests":[{"id":"second","# + Self.circle + "}]}")
        #expect(found.contains { $0.message.contains("member \"requests\" appears twice") }, "\(found)")
    }

    @Test func featurePropertiesMayBeNull() throws {
        let decoded = try decode(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"pier","properties":null,"geometry":{"type":"Polygon","coordinates":[[[4,52],[5,52],[5,53],[4,52]]]}}]}"#
        )
        #expect(decoded.catalog.requests.map(\.id) == ["pier"])
        #expect(
            issues(
                #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"pier","properties":3,"geometry":{"type":"Point","coordinates":[4.89,52.37]}}]}"#
            ).map(\.path).contains("features[0].properties"))
    }

    @Test func shapesAndDefaults() throws {
        let decoded = try decode(
            #"""
            {"defaults": {"hysteresis": {"exitDelay": 5, "exitCushion": 30}},
             "requests": [
              {"id": "inherits", "trigger": {"type": "region", "center": {"lat": 52, "lon": 4}, "radius": 50,
                                              "hysteresis": {"minFixes": 2}}},
              {"id": "naive", "trigger": {"type": "region", "center": {"lat": 52, "lon": 4}, "radius": 50, "hysteresis": "naive"}},
              {"id": "refined", "trigger": {"type": "region", "center": {"lat": 52, "lon": 4}, "radius": 50,
                                             "hysteresis": {"preset": "naive", "exitDelay": 5}}},
              {"id": "route", "trigger": {"type": "region", "geometry": {"type": "LineString", "coordinates": [[4, 52], [4.1, 52]]}}},
              {"id": "multi", "trigger": {"type": "region", "geometry": {"type": "MultiPolygon", "coordinates": [
                [[[4, 52], [4.1, 52], [4.1, 52.1], [4, 52], [4, 52]]], [[[5, 52], [5.1, 52], [5.1, 52.1], [5, 52]]]]}}}
             ]}
            """#)
        func hysteresis(_ index: Int) -> Hysteresis? {
            guard case .region(let trigger) = decoded.catalog.requests[index].trigger else { return nil }
            return trigger.hysteresis
        }
        #expect(hysteresis(0)?.exitDelay == TimeSpan(seconds: 5))
        #expect(hysteresis(0)?.exitCushion == 30)
        #expect(hysteresis(0)?.minFixes == 2)
        #expect(hysteresis(1) == .naive)
        var refined = Hysteresis.naive
        refined.exitDelay = TimeSpan(seconds: 5)
        #expect(hysteresis(2) == refined)
        guard case .region(let route) = decoded.catalog.requests[3].trigger,
            case .corridor(_, let width) = route.geometry
        else {
            Issue.record("no corridor")
            return
        }
        #expect(width == 25)
    }

    @Test func featureCollectionIsACatalog() throws {
        let decoded = try decode(
            #"""
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "id": 17, "geometry": {"type": "Point", "coordinates": [4.89, 52.37]},
               "properties": {"radius": 150, "content": {"title": "Gate"}, "notifyOnExit": false}},
              {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [[[4.88, 52.37], [4.9, 52.37], [4.9, 52.38], [4.88, 52.37]]]},
               "properties": {"id": "depot", "hysteresis": "naive"}}
            ]}
            """#)
        #expect(decoded.catalog.requests.map(\.id) == ["17", "depot"])
        guard case .region(let gate) = decoded.catalog.requests[0].trigger else { Issue.record("not a region"); return }
        #expect(gate.geometry == .circle(center: Coordinate(latitude: 52.37, longitude: 4.89), radius: 150))
        #expect(gate.notifyOnExit == false)
        #expect(decoded.catalog.requests[0].content.title == "Gate")
    }

    @Test func featureErrorsPointIntoTheFeature() {
        let found = issues(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"p","geometry":{"type":"Point","coordinates":[4,52]},"properties":{"radius":-3}},{"type":"Feature","geometry":{"type":"Point","coordinates":[4,52]},"properties":{"radius":3}}]}"#
        )
        #expect(found.map(\.path) == ["features[0].properties.radius", "features[1].properties.id"])
        #expect(found.first?.requestID == "p")
    }

    /// A member that is not the object it must be is reported at its own path, in either layout
    /// (paths below a request are made only for messages).
    @Test func objectsOfTheWrongKindAreReportedAtTheirPaths() {
        let requests = issues(
            #"{"requests":[{"id":"a","trigger":{"type":"region","center":5,"radius":9}},{"id":"b","trigger":{"type":"region","geometry":"square"}},{"id":"c","trigger":7},"d"]}"#
        )
        #expect(
            requests.map { "\($0.path): \($0.message)" } == [
                "requests[0].trigger.center: expected an object, found a number",
                "requests[1].trigger.geometry: expected an object, found a string",
                "requests[2].trigger: expected an object, found a number",
                "requests[3]: expected an object, found a string",
            ])
        let features = issues(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"a"},"geometry":[1]},{"type":"Feature","properties":{"id":"b"}}]}"#
        )
        #expect(
            features.map { "\($0.path): \($0.message)" } == [
                "features[0].geometry: expected an object, found an array", "features[1].geometry: missing object",
            ])
    }

    @Test func unknownFieldsAreWarningsAndRepeatedIdsReplace() throws {
        let decoded = try decode(
            #"{"requests":[{"id":"a","trigger":{"type":"timeInterval","seconds":5,"repeat":true}},{"id":"a","trigger":{"type":"timeInterval","seconds":9},"extra":1},{"id":"b","trigger":{"type":"timeInterval","seconds":9},"other":2}]}"#
        )
        #expect(decoded.catalog.requests.map(\.id) == ["a", "b"])
        #expect(
            decoded.catalog.requests.first?.trigger
                == .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 9))))
        // In input order, a repeat's warning after its request's own and before the next request's
        // (ids are claimed a request late, to prefetch their places).
        #expect(
            decoded.warnings.map(\.path) == [
                "requests[0].trigger.repeat", "requests[1].extra", "requests[1]", "requests[2].other",
            ])
        #expect(decoded.warnings[2].requestID == "a" && decoded.warnings[3].requestID == "b")
    }

    @Test func repeatsAmongManyIdsAreFoundWhateverTheirForm() throws {
        // 3,000 ids, every tenth given again later, and "é" given composed then decomposed: one
        // id, as Swift compares strings. (The id table's growth is RequestIDTableTests'.)
        var items: [String] = []
        for index in 0..<3_000 { items.append(#"{"id":"r\#(index)","# + Self.circle + "}") }
        for index in stride(from: 0, to: 3_000, by: 10) { items.append(#"{"id":"r\#(index)","# + Self.circle + "}") }
        items.append(#"{"id":"caf\u00e9","# + Self.circle + "}")
        items.append(#"{"id":"cafe\u0301","# + Self.circle + "}")
        let decoded = try decode(#"{"requests":["# + items.joined(separator: ",") + "]}")
        #expect(decoded.catalog.requests.count == 3_001)
        #expect(decoded.warnings.count == 301)
        #expect(decoded.warnings.allSatisfy { $0.message.contains("repeats the id") })
        #expect(decoded.warnings.last?.path == "requests[3301]")
        #expect(Set(decoded.catalog.requests.map(\.id)).count == 3_001)
        // A repeated id is where its last request was given.
        #expect(decoded.catalog.requests[2_699].id == "r2999")
        #expect(decoded.catalog.requests[2_700].id == "r0")
    }

    @Test func unknownFieldNamesAreComparedWhole() throws {
        // Escaped names of known fields are known; a prefix, an extension or an empty name is not.
        let decoded = try decode(
            #"{"requests":[{"\u0069d":"b","trigger":{"type":"region","center":{"lat":52,"lon":4},"radius":50,"re\u0070eats":false,"typ":1,"radiuss":2,"":3},"i\u0064s":1}]}"#
        )
        #expect(decoded.catalog.requests.first?.id == "b")
        #expect(
            decoded.warnings.map(\.path).sorted() == [
                "requests[0].ids", "requests[0].trigger.", "requests[0].trigger.radiuss", "requests[0].trigger.typ",
            ])
    }

    @Test func aDecodedCatalogChangedAfterwardsIsValidatedAgainByTheEngine() throws {
        var catalog = try decode(#"{"requests":[{"id":"a","# + Self.circle + "}]}").catalog
        #expect(throws: Never.self) { try Engine(catalog: catalog) }
        catalog.requests[0].trigger = .region(
            RegionTrigger(geometry: .circle(center: Coordinate(latitude: 52, longitude: 4), radius: -1)))
        #expect(throws: CatalogError.self) { try Engine(catalog: catalog) }
    }
}
