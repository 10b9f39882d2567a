import Fenceline
import FencelineFormats
import Testing

@Suite struct JSONPathLineTests {
    /// A catalog laid out one value per line where it matters, so each path has its own line.
    static let catalog = #"""
        {"categories": [
          {"id": "arrival",
           "actions": [{"id": "ack", "title": "Ack"},
                       {"title": "Reply"}]}],
         "defaults": {"hysteresis": {
           "exitDelay": -5}},
         "requests": [
          {"id": "gate", "devices": ["a",
                                     7],
           "trigger": {"type": "region",
                       "center": {"lat": 95, "lon": 4.89}}},
          {"trigger": {"type": "timeInterval", "seconds": 10}},
          {"id": "p", "trigger": {"type": "region", "geometry": {"type": "Polygon", "coordinates": [
            [[4.88, 52.37],
             [4.9, 52.37],
             [4.9, 91]]]}}}
        ]}
        """#

    func lines(_ paths: [String], in text: String) -> [Int?] {
        JSONPathLine.lines(of: paths, in: Array(text.utf8))
    }

    @Test func nestedMembersAndArrayElements() {
        let paths = [
            "categories[0].actions[1].title", "defaults.hysteresis.exitDelay", "requests[0].devices[1]",
            "requests[0].trigger.center", "requests[0].trigger.center.lat", "requests[2].trigger.geometry.coordinates",
            "requests[2].trigger.geometry.coordinates[0][2]", "requests[2].trigger.geometry.coordinates[0][2][1]",
        ]
        #expect(lines(paths, in: Self.catalog) == [4, 6, 9, 11, 11, 13, 16, 16])
    }

    /// A missing member or an element past the end is located at the deepest value the path
    /// reaches: the request without an id, the trigger without a radius, the list itself.
    @Test func missingMembersGetTheLineOfWhatEnclosesThem() {
        let paths = [
            "requests[1].id", "requests[0].trigger.radius", "requests[0].trigger.center.alt",
            "categories[0].actions[1].id", "requests[9].id", "requests[0].devices[5]", "defaults.filters",
        ]
        #expect(lines(paths, in: Self.catalog) == [12, 10, 11, 4, 7, 8, 5])
    }

    @Test func featureCollectionPaths() {
        let collection = #"""
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "id": "pier",
               "geometry": {"type": "Point",
                            "coordinates": [4.89, 95]},
               "properties": {"radius": 150}},
              {"type": "Feature",
               "geometry": {"type": "Point", "coordinates": [4.89, 52.37]},
               "properties": {
                 "radius": -3}}
            ]}
            """#
        let paths = ["features[0].geometry.coordinates", "features[1].properties.radius", "features[1].properties.id"]
        #expect(lines(paths, in: collection) == [4, 9, 8])
    }

    /// Lines are counted at LF, so CRLF line ends count once; a byte-order mark changes nothing.
    @Test func crlfAndByteOrderMark() {
        let paths = ["requests[0].trigger.center", "requests[1].id", "requests[2].trigger.geometry.coordinates[0][2]"]
        let expected: [Int?] = [11, 12, 16]
        let crlf = Self.catalog.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        #expect(lines(paths, in: crlf) == expected)
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(JSONPathLine.lines(of: paths, in: bom + Array(Self.catalog.utf8)) == expected)
        #expect(JSONPathLine.lines(of: paths, in: bom + Array(crlf.utf8)) == expected)
        #expect(JSONPathLine.line(of: "", in: bom + Array("\r\n\r\n[1]".utf8)) == 3)
    }

    /// Every issue the decoder finds in a catalog written on one line is on line 1.
    @Test func aMinifiedCatalogHasEveryIssueOnLineOne() throws {
        let text =
            #"{"requests":[{"trigger":{"type":"timeInterval","seconds":10,"repeats":true}},{"id":"b","trigger":{"type":"region","center":{"lat":95,"lon":1},"radius":-1}},{"id":"c","trigger":{"type":"nope"}}]}"#
        let bytes = Array(text.utf8)
        let error = #expect(throws: CatalogError.self) { try CatalogDecoder().decode(bytes) }
        let issues = try #require(error?.issues)
        #expect(issues.count >= 3)
        #expect(JSONPathLine.lines(of: issues.map(\.path), in: bytes) == issues.map { _ in 1 })
    }

    /// The decoder's own paths land on the lines of the values they name; a value the request
    /// inherits (the default `exitDelay`) is located at the request's trigger.
    @Test func decoderIssuesAreLocated() throws {
        let bytes = Array(Self.catalog.utf8)
        let error = #expect(throws: CatalogError.self) { try CatalogDecoder().decode(bytes) }
        let paths = try #require(error?.issues.map(\.path))
        let located = zip(paths, JSONPathLine.lines(of: paths, in: bytes)).map { "\($0):\($1 ?? 0)" }
        #expect(
            located == [
                "categories[0].actions[1].id:4", "requests[0].devices[1]:9", "requests[0].trigger.radius:10",
                "requests[1].id:12", "requests[2].trigger.geometry.coordinates[0][2]:16",
                "requests[2].trigger.geometry.coordinates[0]:14", "requests[2].trigger.hysteresis.exitDelay:13",
            ])
    }

    /// The empty path is the whole document; a path whose first step is not there, and any path
    /// into a document that is not JSON, has no line.
    @Test func emptyPathsAndPathsThatMatchNothing() {
        #expect(
            lines(["", "nosuch", "nosuch.id", "nosuch[0]", "[0]", "requests[x]"], in: "\n\n" + Self.catalog) == [
                3, nil, nil, nil, nil, 9,
            ])
        #expect(lines(["", "requests[0]"], in: #"{"requests": ["#) == [nil, nil])
        // A syntax error inside the request list, which is only matched for brackets at first.
        #expect(
            lines(["", "defaults", "requests[0].id"], in: "{\"defaults\": {},\n\"requests\": [{\"id\": 1,}]}") == [
                nil, nil, nil,
            ])
        #expect(lines(["requests[0].id"], in: "") == [nil])
    }

    /// Names are joined without escaping, so a name holding `.` or `[` is found by trying each cut
    /// of the path against the names the object has; escaped names match their text.
    @Test func namesWithDotsAndBrackets() {
        let text = #"""
            {"a": {"x": 1},
             "a.b": {
               "c[0]": [10,
                        20]},
             "\u00e9t\u00e9": {"d": [
               true]}}
            """#
        #expect(
            lines(["a.x", "a.b", "a.b.c[0]", "a.b.c[0][1]", "été.d[0]", "a.b.zz"], in: text) == [1, 2, 3, 4, 6, 2])
    }

    /// A document that is an array: paths start with an index, and one past its end matches nothing.
    @Test func aTopLevelArray() {
        #expect(lines(["[1].a", "[1].b", "[2]", ""], in: "[\n{\"a\": 1},\n{\"a\":\n 2}]") == [4, 3, nil, 1])
    }

    /// Thousands of paths into one long list, in reverse order and one past its end, each find
    /// their own line (the list is read once for all of them; that is not timed here).
    @Test func manyPathsIntoALongList() {
        let count = 20000
        let text = "{\"requests\": [\n" + (0..<count).map { "{\"id\": \"r\($0)\"}" }.joined(separator: ",\n") + "\n]}"
        let paths = (0..<count).reversed().map { "requests[\($0)].id" } + ["requests[\(count)].id"]
        let expected = (0..<count).reversed().map { Optional($0 + 2) } + [1]
        #expect(lines(paths, in: text) == expected)
    }
}
