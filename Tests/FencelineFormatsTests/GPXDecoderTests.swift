import Fenceline
import FencelineFormats
import Foundation
import TestSupport
import Testing

/// Every file of `Data/gpx/` against counts made without the decoder: the number of `<trkpt>`,
/// `<rtept>` and `<wpt>` elements with and without a `<time>` child, per track name, counted with
/// grep and Python's `xml.etree` (see `Data/gpx/PROVENANCE.md`).
@Suite struct GPXDecoderTests {
    /// What one file must decode to.
    struct FileExpectation: Sendable, CustomTestStringConvertible {
        var file: String
        var fixes: Int
        /// Error items by the field they name.
        var errors: [String: Int]
        /// Fixes by device.
        var devices: [String: Int]
        /// The times of the first and last fix in document order (not the earliest and latest).
        var first: String?
        var last: String?

        init(
            _ file: String, fixes: Int, errors: [String: Int], devices: [String: Int], first: String?, last: String?
        ) {
            self.file = file
            self.fixes = fixes
            self.errors = errors
            self.devices = devices
            self.first = first
            self.last = last
        }

        var testDescription: String { file }
    }

    static let expectations: [FileExpectation] = [
        FileExpectation(
            "Mojstrovka", fixes: 184, errors: [:], devices: ["Mojstrovka": 184], first: "1901-12-13T20:45:52.207343Z",
            last: "1901-12-13T20:45:52.207343Z"),
        FileExpectation(
            "around-visnjan-with-car", fixes: 104, errors: [:], devices: ["2020-12-18 07:24:29": 104],
            first: "2020-12-18T06:15:50.000000Z", last: "2020-12-18T06:24:24.000000Z"),
        FileExpectation(
            "cerknicko-jezero-no-creator", fixes: 297, errors: ["time": 6],
            devices: [
                "cerknicko-jezero-no-creator": 1, "ACTIVE LOG #2": 173, "ACTIVE LOG #3": 52, "ACTIVE LOG #4": 2,
                "ACTIVE LOG #5": 44, "ACTIVE LOG #6": 2, "ACTIVE LOG #7": 2, "ACTIVE LOG #8": 21,
            ], first: "2010-08-05T14:23:59.000000Z", last: "2010-08-05T16:23:49.000000Z"),
        FileExpectation(
            "cerknicko-jezero-with-elevations-zero", fixes: 296, errors: ["time": 7],
            devices: [
                "ACTIVE LOG #2": 173, "ACTIVE LOG #3": 52, "ACTIVE LOG #4": 2, "ACTIVE LOG #5": 44, "ACTIVE LOG #6": 2,
                "ACTIVE LOG #7": 2, "ACTIVE LOG #8": 21,
            ], first: "2010-08-05T14:23:59.000000Z", last: "2010-08-05T16:23:49.000000Z"),
        FileExpectation(
            "cerknicko-jezero-without-elevations", fixes: 295, errors: ["time": 8],
            devices: [
                "ACTIVE LOG #2": 173, "ACTIVE LOG #3": 52, "ACTIVE LOG #4": 2, "ACTIVE LOG #5": 44, "ACTIVE LOG #6": 2,
                "ACTIVE LOG #7": 2, "ACTIVE LOG #8": 20,
            ], first: "2010-08-05T14:23:59.000000Z", last: "2010-08-05T16:23:35.000000Z"),
        FileExpectation(
            "cerknicko-jezero", fixes: 297, errors: ["time": 6],
            devices: [
                "cerknicko-jezero": 1, "ACTIVE LOG #2": 173, "ACTIVE LOG #3": 52, "ACTIVE LOG #4": 2,
                "ACTIVE LOG #5": 44, "ACTIVE LOG #6": 2, "ACTIVE LOG #7": 2, "ACTIVE LOG #8": 21,
            ], first: "2010-08-05T14:23:59.000000Z", last: "2010-08-05T16:23:49.000000Z"),
        FileExpectation(
            "cerknicko-without-times", fixes: 5, errors: ["time": 298], devices: ["ACTIVE LOG #8": 5],
            first: "2010-08-05T16:22:52.000000Z", last: "2010-08-05T16:23:49.000000Z"),
        FileExpectation("custom_schema_locations", fixes: 0, errors: [:], devices: [:], first: nil, last: nil),
        FileExpectation("default_schema_locations", fixes: 0, errors: [:], devices: [:], first: nil, last: nil),
        FileExpectation(
            "first_and_last_elevation", fixes: 10, errors: [:], devices: ["first_and_last_elevation": 10],
            first: "2013-05-18T08:23:04.000000Z", last: "2013-05-18T09:23:04.000000Z"),
        FileExpectation(
            "gpx-with-node-with-comments", fixes: 1, errors: [:], devices: ["2014-05-06_132925": 1],
            first: "2014-05-06T12:29:33.000000Z", last: "2014-05-06T12:29:33.000000Z"),
        FileExpectation(
            "gpx1.0_with_all_fields", fixes: 3, errors: ["time": 5],
            devices: ["gpx1.0_with_all_fields": 1, "example name": 1, "example name t": 1],
            first: "2013-01-02T02:03:00.000000Z", last: "2013-01-01T12:00:04.000000Z"),
        FileExpectation(
            "gpx1.1_with_all_fields", fixes: 3, errors: ["time": 5],
            devices: ["gpx1.1_with_all_fields": 1, "example name": 1, "example name t": 1],
            first: "2013-01-02T02:03:00.000000Z", last: "2013-01-01T12:00:04.000000Z"),
        FileExpectation("gpx1.1_with_extensions", fixes: 0, errors: ["time": 1], devices: [:], first: nil, last: nil),
        FileExpectation(
            "gpx1.1_with_extensions_without_namespaces", fixes: 0, errors: ["time": 1], devices: [:], first: nil,
            last: nil),
        FileExpectation(
            "gpx_with_garmin_extension", fixes: 1, errors: [:], devices: ["gpx_with_garmin_extension": 1],
            first: "2016-06-17T23:41:03.000000Z", last: "2016-06-17T23:41:03.000000Z"),
        FileExpectation(
            "korita-zbevnica", fixes: 513, errors: ["time": 360], devices: ["ACTIVE LOG": 176, "ACTIVE LOG #2": 337],
            first: "2010-10-03T09:36:30.000000Z", last: "2010-10-03T13:19:31.000000Z"),
        FileExpectation("route", fixes: 0, errors: ["time": 55], devices: [:], first: nil, last: nil),
        FileExpectation(
            "track-with-empty-segment", fixes: 9, errors: [:], devices: ["2013-07-06T14:59:00Z": 9],
            first: "2013-07-06T17:26:26.000000Z", last: "2013-07-06T17:27:42.000000Z"),
        FileExpectation("track-with-extremes", fixes: 0, errors: ["time": 25], devices: [:], first: nil, last: nil),
        FileExpectation(
            "track-with-less-sec-time", fixes: 2, errors: [:], devices: ["track-with-less-sec-time": 2],
            first: "2015-12-11T14:43:13.000000Z", last: "2015-12-11T14:43:13.994000Z"),
        FileExpectation("track-with-small-floats", fixes: 0, errors: ["time": 3], devices: [:], first: nil, last: nil),
        FileExpectation(
            "track_with_dilution_errors", fixes: 0, errors: ["time": 3], devices: [:], first: nil, last: nil),
        FileExpectation(
            "track_with_speed", fixes: 3, errors: [:], devices: ["track_with_speed": 3],
            first: "2009-03-02T14:05:52.000000Z", last: "2009-03-02T14:06:05.000000Z"),
        FileExpectation("unicode", fixes: 0, errors: ["time": 6], devices: [:], first: nil, last: nil),
        FileExpectation("unicode2", fixes: 0, errors: [:], devices: [:], first: nil, last: nil),
        FileExpectation(
            "unicode_with_bom", fixes: 1, errors: [:], devices: ["unicode_with_bom": 1],
            first: "2016-05-27T10:08:47.800000Z", last: "2016-05-27T10:08:47.800000Z"),
        FileExpectation(
            "unicode_with_bom_noencoding", fixes: 0, errors: ["time": 1], devices: [:], first: nil, last: nil),
        FileExpectation(
            "validation_gpx10", fixes: 3, errors: ["time": 5],
            devices: ["validation_gpx10": 1, "example name": 1, "example name t": 1],
            first: "2013-01-02T02:03:00.000000Z", last: "2013-01-01T12:00:04.000000Z"),
        FileExpectation(
            "validation_gpx11", fixes: 3, errors: ["time": 5],
            devices: ["validation_gpx11": 1, "example name": 1, "example name t": 1],
            first: "2013-01-02T02:03:00.000000Z", last: "2013-01-01T12:00:04.000000Z"),
    ]

    @Test func everyFileInTheFolderHasAnExpectation() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: GPXFiles.directory.path)
            .filter { $0.hasSuffix(".gpx") }.map { String($0.dropLast(4)) }
        #expect(Set(names) == Set(Self.expectations.map(\.file)))
        #expect(names.count == 30)
    }

    @Test(arguments: expectations)
    func file(_ expected: FileExpectation) throws {
        let items = try GPXFiles.decode(expected.file)
        let fixes = items.compactMap(\.fix)
        let errors = items.compactMap(\.error)
        #expect(fixes.count == expected.fixes)
        #expect(Dictionary(errors.map { ($0.field ?? "-", 1) }, uniquingKeysWith: +) == expected.errors)
        #expect(Dictionary(fixes.map { ($0.device, 1) }, uniquingKeysWith: +) == expected.devices)
        #expect(fixes.first?.time == expected.first.flatMap { Timestamp(rfc3339: $0) })
        #expect(fixes.last?.time == expected.last.flatMap { Timestamp(rfc3339: $0) })
        for error in errors {
            #expect(error.code == .invalidField)
            #expect(error.message.contains("has no <time>"), "\(error)")
        }
        // GPX carries no accuracy in metres; hdop/pdop are not turned into one.
        #expect(fixes.allSatisfy { $0.accuracy == nil })
        // Items come in document order, each at the line of its point's start tag (all of them fit
        // on one line in these files), found here by a plain text search.
        #expect(try items.map(\.line) == GPXFiles.startTagLines(expected.file))
    }
}

/// Reading the files of `Data/gpx/`.
enum GPXFiles {
    static let directory = Fixtures.dataDirectory.appendingPathComponent("gpx")

    static func bytes(_ file: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(file + ".gpx")))
    }

    /// The file decoded with its name as the file device, as the CLI does.
    static func decode(_ file: String, device: String? = nil) throws -> [GPXDecoder.Item] {
        GPXDecoder.decode(try bytes(file), fileDevice: file, deviceOverride: device)
    }

    /// The 1-based line of every `<trkpt `, `<rtept ` and `<wpt ` in the text, in order.
    static func startTagLines(_ file: String) throws -> [Int] {
        var lines: [Int] = []
        // Split the bytes: as a String, CRLF is one Character and would not split at "\n".
        for (index, line) in try bytes(file).split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            var rest = String(decoding: line, as: UTF8.self)[...]
            while let range = rest.firstRange(of: #/<(trkpt|rtept|wpt) /#) {
                lines.append(index + 1)
                rest = rest[range.upperBound...]
            }
        }
        return lines
    }
}

extension GPXDecoder.Item {
    var fix: Fix? {
        guard case .success(.fix(let fix)) = result else { return nil }
        return fix
    }

    var error: LineError? {
        guard case .failure(let error) = result else { return nil }
        return error
    }
}
