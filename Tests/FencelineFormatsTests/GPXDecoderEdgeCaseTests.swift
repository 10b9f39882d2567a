import Fenceline
import FencelineFormats
import Foundation
import TestSupport
import Testing

/// Exact values of points in `Data/gpx/` (read off the file text), and the documented semantics on
/// small inline documents.
@Suite struct GPXDecoderEdgeCaseTests {
    static func decode(_ text: String, device: String? = nil) -> [GPXDecoder.Item] {
        GPXDecoder.decode(Array(text.utf8), fileDevice: "file", deviceOverride: device)
    }

    static func time(_ text: String) -> Timestamp { Timestamp(rfc3339: text)! }

    @Test func visnjanFirstAndLastPointsAreExact() throws {
        // <trkpt lat="45.2735188510" lon="13.7142099626"><ele>211.15</ele><time>2020-12-18T06:15:50Z</time></trkpt>
        let items = try GPXFiles.decode("around-visnjan-with-car")
        #expect(
            items.first?.fix
                == Fix(
                    device: "2020-12-18 07:24:29", time: Self.time("2020-12-18T06:15:50Z"),
                    coordinate: Coordinate(latitude: 45.2735188510, longitude: 13.7142099626), altitude: 211.15))
        // ...<trkpt lat="45.2733349521" lon="13.7139970623"><ele>210.67</ele><time>2020-12-18T06:24:24Z</time></trkpt>
        #expect(items.last?.fix?.coordinate == Coordinate(latitude: 45.2733349521, longitude: 13.7139970623))
        #expect(items.last?.fix?.altitude == 210.67)
        #expect(items.allSatisfy { $0.line == 1 })
    }

    @Test func koritaPointsSitAtTheirLines() throws {
        let items = try GPXFiles.decode("korita-zbevnica")
        // Line 1113: <trkpt lat="45.452595614" lon="14.018194014">, <ele>753.330322</ele>, 2010-10-03T09:36:30Z:
        // the first timed point, in track "ACTIVE LOG".
        let first = try #require(items.first { $0.line == 1113 }?.fix)
        #expect(first.coordinate == Coordinate(latitude: 45.452595614, longitude: 14.018194014))
        #expect(first.altitude == 753.330322)
        #expect(first.time == Self.time("2010-10-03T09:36:30Z"))
        #expect(first.device == "ACTIVE LOG")
        // Line 3167: the last point, in "ACTIVE LOG #2".
        let last = try #require(items.last)
        #expect(last.line == 3167)
        #expect(last.fix?.coordinate == Coordinate(latitude: 45.452453708, longitude: 14.018215053))
        #expect(last.fix?.device == "ACTIVE LOG #2")
        // Line 10: the first waypoint has no time.
        #expect(items.first?.line == 10)
        #expect(items.first?.error?.field == "time")
        #expect(items.first?.error?.message.contains("<wpt>") == true)
    }

    @Test func mojstrovkaKeepsSevenDigitFractionsToTheMicrosecond() throws {
        let fixes = try GPXFiles.decode("Mojstrovka").compactMap(\.fix)
        // 1901-12-13T20:45:52.2073437Z, then 1901-12-13T20:45:52.207Z.
        #expect(fixes[0].time.microseconds == Self.time("1901-12-13T20:45:52Z").microseconds + 207_343)
        #expect(fixes[1].time == Self.time("1901-12-13T20:45:52.207Z"))
        #expect(fixes[0].time.microseconds < 0)
        #expect(fixes[0].altitude == 1614.678)
    }

    @Test func timesWithoutZoneAreUTCAndOffsetsAreApplied() throws {
        // <time>2013-01-01T12:00:04</time> on the track point of both all-fields files.
        for file in ["gpx1.0_with_all_fields", "gpx1.1_with_all_fields"] {
            let fix = try #require(try GPXFiles.decode(file).compactMap(\.fix).last)
            #expect(fix.time == Self.time("2013-01-01T12:00:04Z"))
            #expect(fix.coordinate == Coordinate(latitude: 10.1, longitude: -20.2))
            #expect(fix.altitude == 11.1)
            #expect(fix.device == "example name t")
        }
        // 2015-12-11T15:43:13.994+01:00
        let fixes = try GPXFiles.decode("track-with-less-sec-time").compactMap(\.fix)
        #expect(fixes.last?.time == Self.time("2015-12-11T14:43:13.994Z"))
        #expect(fixes.last?.coordinate == Coordinate(latitude: 57.01147, longitude: 9.992874))
    }

    @Test func gpx10SpeedAndCourseAreCarried() throws {
        let fixes = try GPXFiles.decode("track_with_speed").compactMap(\.fix)
        #expect(fixes.map(\.speed) == [1.2, 2.2, 3.2])
        #expect(fixes.map(\.altitude) == [48.962041, 58.166437, 53.381747])
        let items = Self.decode(
            """
            <gpx version="1.0" xmlns="http://www.topografix.com/GPX/1/0"><trk><trkseg>
            <trkpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time><course>271.5</course><speed>0</speed></trkpt>
            </trkseg></trk></gpx>
            """)
        #expect(items.first?.fix?.heading == 271.5)
        #expect(items.first?.fix?.speed == 0)
    }

    @Test func extensionsAreIgnoredWhateverTheirNamespace() throws {
        let items = Self.decode(
            """
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"
                 xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
            <trk><name>t</name><trkseg>
            <trkpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time><extensions><gpxtpx:TrackPointExtension>
              <gpxtpx:speed>9</gpxtpx:speed><gpxtpx:course>90</gpxtpx:course></gpxtpx:TrackPointExtension></extensions></trkpt>
            <trkpt lat="1" lon="2"><extensions><time>2020-01-01T00:00:01Z</time><undeclared:x>1</undeclared:x></extensions></trkpt>
            </trkseg><extensions><name>not the name</name><trkpt lat="5" lon="5"/></extensions></trk></gpx>
            """)
        #expect(items.count == 2)
        #expect(items[0].fix?.speed == nil)
        #expect(items[0].fix?.heading == nil)
        #expect(items[0].fix?.device == "t")
        #expect(items[1].error?.field == "time")
        // The garmin extension file: a waypoint with a heart rate in its extension.
        let garmin = try GPXFiles.decode("gpx_with_garmin_extension")
        #expect(
            garmin.first?.fix
                == Fix(
                    device: "gpx_with_garmin_extension", time: Self.time("2016-06-17T23:41:03Z"),
                    coordinate: Coordinate(latitude: 37.778259, longitude: -122.391386), altitude: 3.4))
    }

    @Test func dilutionOfPrecisionDoesNotBecomeAccuracy() throws {
        let items = Self.decode(
            """
            <gpx><wpt lat="12.1" lon="13.2"><time>2020-01-01T00:00:00Z</time><hdop>100.1</hdop><pdop>102.1</pdop></wpt></gpx>
            """)
        #expect(items.first?.fix?.accuracy == nil)
        // The gpxpy file has no times: every point is an error item, hdop or not.
        #expect(try GPXFiles.decode("track_with_dilution_errors").map(\.error?.field) == ["time", "time", "time"])
    }

    @Test func elevationsMayBeSpeltOddly() throws {
        // cerknicko-jezero-with-elevations-zero, last four points: <ele>0</ele>, -.0, -0., -0
        let fixes = try GPXFiles.decode("cerknicko-jezero-with-elevations-zero").compactMap(\.fix)
        #expect(fixes.suffix(4).map(\.altitude) == [0, 0, 0, 0])
        #expect(fixes.suffix(3).allSatisfy { $0.altitude?.sign == .minus })
    }

    @Test func unicodeNamesBOMsAndEncodings() throws {
        #expect(try GPXFiles.decode("unicode_with_bom").first?.fix?.time == Self.time("2016-05-27T10:08:47.8Z"))
        #expect(try GPXFiles.decode("gpx-with-node-with-comments").first?.fix?.device == "2014-05-06_132925")
        let named = """
            <?xml version="1.0" encoding="%@"?>
            <gpx><trk><name><![CDATA[test™]]> Škofja Loka</name><trkseg>
            <trkpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>
            """
        let utf16 = Array(named.replacingOccurrences(of: "%@", with: "UTF-16").data(using: .utf16)!)
        #expect(utf16.prefix(2) == [0xFF, 0xFE])
        let items = GPXDecoder.decode(utf16, fileDevice: "f", deviceOverride: nil)
        #expect(items.first?.fix?.device == "test™ Škofja Loka")
        #expect(items.first?.line == 3)
        let latin1Text = """
            <?xml version="1.0" encoding="ISO-8859-1"?>
            <gpx><trk><name>Café Zürich</name><trkseg>
            <trkpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>
            """
        let latin1 = Array(latin1Text.data(using: .isoLatin1)!)
        #expect(latin1.contains(0xE9))
        #expect(GPXDecoder.decode(latin1, fileDevice: "f", deviceOverride: nil).first?.fix?.device == "Café Zürich")
    }

    @Test func prefixedAndMissingNamespacesReadAlike() {
        let items = Self.decode(
            """
            <g:gpx xmlns:g="http://www.topografix.com/GPX/1/1"><g:trk><g:name>pre</g:name><g:trkseg>
            <g:trkpt lat="1.5" lon="-2.5"><g:ele>3</g:ele><g:time>2020-01-01T00:00:00Z</g:time></g:trkpt>
            </g:trkseg></g:trk></g:gpx>
            """)
        #expect(
            items.first?.fix
                == Fix(
                    device: "pre", time: Self.time("2020-01-01T00:00:00Z"),
                    coordinate: Coordinate(latitude: 1.5, longitude: -2.5), altitude: 3))
    }

    @Test func devicesComeFromTheOverrideTheTrackNameOrTheFile() throws {
        #expect(
            try GPXFiles.decode("around-visnjan-with-car", device: "car").allSatisfy { $0.fix?.device == "car" })
        let items = Self.decode(
            """
            <gpx>
            <trk><trkseg><trkpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time></trkpt></trkseg>
            <name>  late name
            </name></trk>
            <trk><name>   </name><trkseg><trkpt lat="1" lon="2"><time>2020-01-01T00:00:01Z</time></trkpt></trkseg></trk>
            <rte><name>Tom &amp; Jerry &#x160;</name><rtept lat="1" lon="2"><name>point name</name><time>2020-01-01T00:00:02Z</time></rtept></rte>
            <wpt lat="1" lon="2"><name>waypoint name</name><time>2020-01-01T00:00:03Z</time></wpt>
            <trkpt lat="1" lon="2"><time>2020-01-01T00:00:04Z</time></trkpt>
            </gpx>
            """)
        #expect(items.map(\.fix?.device) == ["late name", "file", "Tom & Jerry Š", "file", "file"])
        #expect(items.map(\.line) == [2, 5, 6, 7, 8])
    }

    @Test(arguments: [
        (#"lat="91" lon="2""#, "<time>2020-01-01T00:00:00Z</time>", "lat", "out of range"),
        (#"lat="-90.5" lon="2""#, "<time>2020-01-01T00:00:00Z</time>", "lat", "out of range"),
        (#"lat="1" lon="180.0001""#, "<time>2020-01-01T00:00:00Z</time>", "lon", "not normalised"),
        (#"lon="2""#, "<time>2020-01-01T00:00:00Z</time>", "lat", "no lat attribute"),
        (#"lat="1""#, "<time>2020-01-01T00:00:00Z</time>", "lon", "no lon attribute"),
        (#"lat="north" lon="2""#, "<time>2020-01-01T00:00:00Z</time>", "lat", "not a decimal number"),
        (#"lat="nan" lon="2""#, "<time>2020-01-01T00:00:00Z</time>", "lat", "not a decimal number"),
        (#"lat="1" lon="0x10""#, "<time>2020-01-01T00:00:00Z</time>", "lon", "not a decimal number"),
        (#"lat="1e999" lon="2""#, "<time>2020-01-01T00:00:00Z</time>", "lat", "not a decimal number"),
        (#"lat="1" lon="2""#, "", "time", "has no <time>"),
        (#"lat="1" lon="2""#, "<time></time>", "time", "not an xsd:dateTime"),
        (#"lat="1" lon="2""#, "<time>yesterday</time>", "time", "not an xsd:dateTime"),
        (#"lat="1" lon="2""#, "<time>2020-02-30T00:00:00Z</time>", "time", "not an xsd:dateTime"),
        (#"lat="1" lon="2""#, "<time>2020-01-01T00:00:00Z</time><ele>high</ele>", "ele", "not a decimal number"),
        (#"lat="1" lon="2""#, "<time>2020-01-01T00:00:00Z</time><speed>-</speed>", "speed", "not a decimal"),
        (#"lat="1" lon="2""#, "<time>2020-01-01T00:00:00Z</time><fix>none</fix>", "fix", "no position"),
    ])
    func badPointsAreErrorItemsAndTheNextPointIsRead(
        attributes: String, children: String, field: String, reason: String
    ) {
        let items = Self.decode(
            """
            <gpx><trk><trkseg>
            <trkpt \(attributes)>\(children)</trkpt>
            <trkpt lat=" 1.25 " lon="+2."><time> 2020-01-01T00:00:09Z
            </time><ele></ele></trkpt>
            </trkseg></trk></gpx>
            """)
        #expect(items.count == 2)
        #expect(items.first?.line == 2)
        #expect(items.first?.error?.field == field)
        #expect(items.first?.error?.code == .invalidField)
        #expect(items.first?.error?.message.contains(reason) == true, "\(String(describing: items.first?.error))")
        #expect(items.last?.fix?.coordinate == Coordinate(latitude: 1.25, longitude: 2))
        #expect(items.last?.fix?.time == Self.time("2020-01-01T00:00:09Z"))
        #expect(items.last?.fix?.altitude == nil)
    }

    @Test func aPointWhoseTagSpansLinesIsAtTheLineWhereTheTagEnds() {
        let items = Self.decode("<gpx>\n<wpt\n lat=\"1\"\n lon=\"2\"><time>2020-01-01T00:00:00Z</time></wpt></gpx>")
        #expect(items.map(\.line) == [4])
    }
}
