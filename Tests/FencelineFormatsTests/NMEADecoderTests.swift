import Fenceline
import FencelineFormats
import Foundation
import TestSupport
import Testing

/// `NMEADecoder` line by line; `NMEAGpsdAgreementTests` checks it against gpsd on real captures.
@Suite struct NMEADecoderTests {
    /// What feeding some lines gave.
    struct Outcome {
        var fixes: [(fix: Fix, line: Int)] = []
        var errors: [(line: Int, error: LineError)] = []
    }

    /// `$body*hh` with the right checksum.
    static func sentence(_ body: String, checksum: String? = nil) -> String {
        let sum = body.utf8.reduce(UInt8(0), ^)
        return "$\(body)*\(checksum ?? String(format: "%02X", sum))"
    }

    /// Feeds `lines` (numbered from 1) to a fresh decoder, then finishes it.
    static func decode(_ lines: [String], finish: Bool = true) -> Outcome {
        var decoder = NMEADecoder(device: "gps")
        var outcome = Outcome()
        for (index, line) in lines.enumerated() {
            do {
                let bytes = Array(line.utf8)
                if let (reading, at) = try bytes.withUnsafeBufferPointer({ buffer throws(LineError) in
                    try decoder.decode(buffer, lineNumber: index + 1)
                }), case .fix(let fix) = reading {
                    outcome.fixes.append((fix, at))
                }
            } catch {
                outcome.errors.append((index + 1, error))
            }
        }
        if finish, let (reading, at) = decoder.finish(), case .fix(let fix) = reading {
            outcome.fixes.append((fix, at))
        }
        return outcome
    }

    /// The one error `line` gives to a fresh decoder.
    static func error(_ line: String) -> LineError? {
        decode([line]).errors.first?.error
    }

    static func time(_ text: String) -> Timestamp { Timestamp(rfc3339: text)! }

    static let rmc = sentence("GPRMC,123519.00,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W,A")
    static let gga = sentence("GPGGA,123519.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
    static let gst = sentence("GPGST,123519.00,1.2,3.0,2.0,45.0,3.0,4.0,5.0")
    static let nextGGA = sentence("GPGGA,123520.00,4807.040,N,01131.002,E,1,08,0.9,545.5,M,46.9,M,,")

    // MARK: Epochs

    @Test func sentencesOfOneTimeMakeOneFix() throws {
        let outcome = Self.decode(["", Self.rmc, Self.sentence("GPGSV,1,1,01,02,05,307,"), Self.gga, Self.gst])
        #expect(outcome.errors.isEmpty)
        let (fix, line) = try #require(outcome.fixes.first)
        #expect(outcome.fixes.count == 1 && line == 2)
        #expect(fix.device == "gps")
        #expect(fix.time == Self.time("1994-03-23T12:35:19Z"))
        #expect(fix.coordinate == Coordinate(latitude: 48 + 7.038 / 60, longitude: 11 + 31.0 / 60))
        #expect(abs(fix.speed! - 22.4 * 0.514_444) < 1e-5)
        #expect(fix.heading == 84.4)
        #expect(fix.altitude == 545.4)
        #expect(fix.accuracy == 5)
    }

    @Test func aFixLeavesWhenTheNextTimeArrives() {
        var decoder = NMEADecoder(device: "gps")
        func feed(_ line: String, _ number: Int) -> (reading: Reading, line: Int)? {
            let bytes = Array(line.utf8)
            return try? bytes.withUnsafeBufferPointer { buffer throws(LineError) in
                try decoder.decode(buffer, lineNumber: number)
            }
        }
        #expect(feed(Self.rmc, 1) == nil)
        #expect(feed(Self.gga, 2) == nil)
        let first = feed(Self.nextGGA, 3)
        #expect(first?.line == 1 && first?.reading.time == Self.time("1994-03-23T12:35:19Z"))
        let last = decoder.finish()
        #expect(last?.line == 3 && last?.reading.time == Self.time("1994-03-23T12:35:20Z"))
        #expect(decoder.finish() == nil)
    }

    @Test func timesGivenWithFewerDecimalsJoinTheEpoch() throws {
        // A Magellan eXplorist sends GLL to the millisecond, GGA and RMC to the hundredth.
        let outcome = Self.decode([
            Self.sentence("GPGLL,5313.2228,N,00634.4228,E,200619.295,A"),
            Self.sentence("GPGGA,200619.30,5313.2228,N,00634.4228,E,1,05,2.6,00000,M,,,,"),
            Self.sentence("GPRMC,200619.30,A,5313.2228,N,00634.4228,E,00.0,000.0,200506,00,W"),
            Self.sentence("GPGLL,5313.2228,N,00634.4228,E,200620.303,A"),
        ])
        #expect(outcome.fixes.map(\.line) == [1, 4])
        #expect(
            outcome.fixes.map(\.fix.time) == [
                Self.time("2006-05-20T20:06:19.30Z"), Self.time("2006-05-20T20:06:20.303Z"),
            ])
    }

    @Test func theMorePrecisePositionWins() throws {
        let outcome = Self.decode([
            Self.sentence("GPGGA,193221.00,2037.72792,N,08704.08478,W,1,06,1.8,-30.4,M,-13.9,M,,"),
            Self.sentence("GPRMC,193221.00,A,2037.7279,N,08704.0848,W,00.1,201.8,231207,01,W,A"),
        ])
        let fix = try #require(outcome.fixes.first?.fix)
        #expect(fix.coordinate == Coordinate(latitude: 20 + 37.72792 / 60, longitude: -(87 + 4.08478 / 60)))
    }

    @Test func errorsKeepTheHeldEpoch() throws {
        let bad = Self.sentence("GPGGA,123520.00,4807.040,N,01131.002,E,1,08,0.9,545.5,M,46.9,M,,", checksum: "00")
        let outcome = Self.decode([Self.rmc, bad, Self.gga])
        #expect(outcome.errors.map(\.line) == [2])
        #expect(outcome.fixes.count == 1 && outcome.fixes.first?.fix.altitude == 545.4)
    }

    // MARK: Dates

    @Test func theDateIsCarriedToLaterEpochs() {
        let outcome = Self.decode([Self.rmc, Self.nextGGA, Self.sentence("GPGLL,4807.041,N,01131.003,E,123521.00,A,A")])
        #expect(
            outcome.fixes.map(\.fix.time) == [
                Self.time("1994-03-23T12:35:19Z"), Self.time("1994-03-23T12:35:20Z"), Self.time("1994-03-23T12:35:21Z"),
            ])
    }

    @Test func epochsBeforeAnyDateAreDropped() {
        let outcome = Self.decode([Self.gga, Self.nextGGA])
        #expect(outcome.fixes.isEmpty && outcome.errors.isEmpty)
    }

    @Test func midnightMovesTheCarriedDateOn() {
        let outcome = Self.decode([
            Self.sentence("GPRMC,235959.00,A,4807.038,N,01131.000,E,0.0,0.0,281299,,,A"),
            Self.sentence("GPGGA,000000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"),
            Self.sentence("GPGGA,000001.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"),
            // Back by minutes, not hours: the same day (two captures spliced together).
            Self.sentence("GPGGA,235000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"),
        ])
        #expect(
            outcome.fixes.map(\.fix.time) == [
                Self.time("1999-12-28T23:59:59Z"), Self.time("1999-12-29T00:00:00Z"), Self.time("1999-12-29T00:00:01Z"),
                Self.time("1999-12-29T23:50:00Z"),
            ])
    }

    @Test(arguments: [
        ("010180", "1980-01-01"), ("311299", "1999-12-31"), ("290200", "2000-02-29"), ("311279", "2079-12-31"),
    ])
    func twoDigitYearsPivotAt80(date: String, expected: String) {
        let outcome = Self.decode([Self.sentence("GPRMC,000000,A,0000.000,N,00000.000,E,,,\(date),,")])
        #expect(outcome.fixes.first?.fix.time == Self.time(expected + "T00:00:00Z"))
    }

    @Test func zdaGivesTheDateToGGAOnlyReceivers() {
        let outcome = Self.decode([
            Self.sentence("GPZDA,051134.000,04,07,2012,,"),
            Self.sentence("GPGGA,051134.000,4744.6980,N,12206.7275,W,1,05,1.9,135.4,M,-17.1,M,18.8,0000"),
        ])
        #expect(outcome.fixes.map(\.fix.time) == [Self.time("2012-07-04T05:11:34Z")])
    }

    @Test(arguments: [
        "GPRMC,123519,A,4807.038,N,01131.000,E,,,320394,,", "GPRMC,123519,A,4807.038,N,01131.000,E,,,290219,,",
    ])
    func impossibleDatesAreErrors(body: String) {
        #expect(Self.error(Self.sentence(body))?.field == "RMC date")
    }
}
