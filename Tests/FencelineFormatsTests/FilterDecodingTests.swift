import Fenceline
import FencelineFormats
import Testing

/// SPEC §12 "Where": `defaults.filters` and a request's `filters`, refined field by field, each
/// bad value reported with the request id and the JSON path.
@Suite struct FilterDecodingTests {
    static let circle = CatalogDecoderTests.circle

    func decode(_ text: String) throws(CatalogError) -> Catalog {
        try CatalogDecoder().decode(Array(text.utf8)).catalog
    }

    /// Every problem of the catalog, as the catalog decoder's own tests read them.
    func issues(_ text: String) -> [CatalogIssue] { CatalogDecoderTests().issues(text) }

    @Test func aRequestRefinesTheDefaultsFieldByField() throws {
        let catalog = try decode(
            #"{"defaults":{"filters":{"maxSpeed":40,"minDistance":5,"maxFuture":300}},"requests":["#
                + #"{"id":"a","# + Self.circle + #"},"#
                + #"{"id":"b","filters":{"maxSpeed":90,"minDistance":null},"# + Self.circle + #"}]}"#)
        #expect(
            catalog.defaultFilters == PositionFilters(maxSpeed: 40, minDistance: 5, maxFuture: TimeSpan(seconds: 300)))
        #expect(catalog.requests[0].filters == catalog.defaultFilters)
        #expect(catalog.requests[1].filters == PositionFilters(maxSpeed: 90, maxFuture: TimeSpan(seconds: 300)))
    }

    @Test func expiresIsATimeInEitherForm() throws {
        let catalog = try decode(
            #"{"requests":[{"id":"a","expires":"2026-03-02T09:00:00+01:00","# + Self.circle + #"},"#
                + #"{"id":"b","expires":1772438400,"# + Self.circle + "}]}")
        #expect(
            catalog.requests.map(\.expires) == [Timestamp(seconds: 1_772_438_400), Timestamp(seconds: 1_772_438_400)])
    }

    @Test func aFeatureCarriesFiltersInItsProperties() throws {
        let catalog = try decode(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[4.89,52.37]},"#
                + #""properties":{"id":"f","radius":50,"filters":{"minDistance":12}}}]}"#)
        #expect(catalog.requests[0].filters == PositionFilters(minDistance: 12))
    }

    @Test(
        arguments: [
            (#""filters":{"maxSpeed":0}"#, "requests[0].filters.maxSpeed", "positive"),
            (#""filters":{"maxSpeed":-3}"#, "requests[0].filters.maxSpeed", "positive"),
            (#""filters":{"minDistance":-1}"#, "requests[0].filters.minDistance", "zero or more"),
            (#""filters":{"maxFuture":-5}"#, "requests[0].filters.maxFuture", "zero or more"),
            (#""filters":{"maxSpeed":"fast"}"#, "requests[0].filters.maxSpeed", "expected a number"),
            (#""filters":[1]"#, "requests[0].filters", "expected an object"),
            (#""expires":"tomorrow""#, "requests[0].expires", "expected an RFC 3339 time"),
            (#""expires":true"#, "requests[0].expires", "expected an RFC 3339 time or Unix seconds"),
        ])
    func badRequestFiltersNameTheRequestAndPath(field: String, path: String, message: String) {
        let found = issues(#"{"requests":[{"id":"a","# + field + "," + Self.circle + "}]}")
        #expect(found.count == 1)
        #expect(found.first?.requestID == "a")
        #expect(found.first?.path == path)
        #expect(found.first?.message.contains(message) == true)
    }

    /// Every problem at once (SPEC §2): a member that cannot be read does not hide the range
    /// problems of the others.
    @Test func aBadMemberDoesNotHideTheRequestsOtherProblems() {
        let found = issues(
            #"{"requests":[{"id":"a","expires":"tomorrow","filters":{"maxSpeed":0},"# + Self.circle + "}]}")
        #expect(found.map(\.path) == ["requests[0].expires", "requests[0].filters.maxSpeed"])
        #expect(found.allSatisfy { $0.requestID == "a" })
    }

    /// An `add` record with several problems names the first in its field and every one in the
    /// message, each with its path.
    @Test func anAddRecordNamesEveryProblem() {
        let decoder = NDJSONReadingDecoder(
            requests: NDJSONReadingDecoder.RequestContext(decoder: CatalogDecoder(), catalog: Catalog()))
        let line = Array(
            (#"{"op":"add","request":{"id":"p","trigger":{"type":"proximity","near":50,"far":10,"among":["t*g"],"#
                + #""maxAge":-1}}}"#).utf8)
        let result = line.withUnsafeBufferPointer { buffer in
            Result { () throws(LineError) in try decoder.decode(buffer) }
        }
        guard case .failure(let error) = result else {
            Issue.record("the record was accepted")
            return
        }
        #expect(error.field == "request.trigger.far")
        #expect(error.message.hasPrefix(#"request "p": far must be"#), "\(error.message)")
        #expect(error.message.contains("; trigger.among[0]: "))
        #expect(error.message.contains("; trigger.maxAge: "))
    }

    /// The validator's own problems are all reported, several in one member too; what it would
    /// say of a member that could not be read is not (it would be about a value never given).
    @Test func theValidatorsProblemsAreAllReportedButNotAboutAnUnreadMember() {
        let hysteresis = issues(
            #"{"requests":[{"id":"h","trigger":{"type":"region","center":{"lat":52,"lon":4},"radius":100,"#
                + #""hysteresis":{"minFixes":0,"enterOverlap":0.1,"exitOverlap":0.5}}}]}"#)
        #expect(
            hysteresis.map(\.path) == ["requests[0].trigger.hysteresis.minFixes", "requests[0].trigger.hysteresis"],
            "\(hysteresis)")
        let beacon = issues(
            #"{"requests":[{"id":"b","trigger":{"type":"beacon","uuid":"2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6","#
                + #""major":1.5,"minor":7}}]}"#)
        #expect(beacon.map(\.path) == ["requests[0].trigger.major"], "\(beacon)")
    }

    @Test func badDefaultsAreReportedOnceAtTheirPath() {
        let found = issues(
            #"{"defaults":{"filters":{"maxSpeed":-1}},"requests":[{"id":"a","# + Self.circle + #"},{"id":"b","#
                + Self.circle + "}]}")
        #expect(found.map(\.path) == ["defaults.filters.maxSpeed"])
    }

    @Test func anAddRecordTakesTheCatalogsDefaultFilters() throws {
        var catalog = Catalog()
        catalog.defaultFilters = PositionFilters(maxSpeed: 33)
        let decoder = NDJSONReadingDecoder(
            requests: NDJSONReadingDecoder.RequestContext(decoder: CatalogDecoder(), catalog: catalog))
        let line = Array((#"{"op":"add","request":{"id":"x","filters":{"minDistance":4},"# + Self.circle + "}}").utf8)
        let reading = try line.withUnsafeBufferPointer { buffer throws(LineError) in try decoder.decode(buffer) }
        guard case .control(let control)? = reading, case .add(let request) = control.operation else {
            Issue.record("not an add record: \(String(describing: reading))")
            return
        }
        #expect(request.filters == PositionFilters(maxSpeed: 33, minDistance: 4))
    }
}
