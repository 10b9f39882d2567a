import Fenceline
import FencelineFormats
import Foundation
import TestSupport
import Testing

/// Framing, checksums, fields and validity of single sentences; hostile input.
extension NMEADecoderTests {
    // MARK: Framing and checksum

    @Test func checksumsAreVerifiedInEitherCase() {
        let body = "GPGLL,4916.45,N,12311.12,W,225444,A,A"
        let sum = String(format: "%02x", body.utf8.reduce(UInt8(0), ^))
        #expect(Self.decode(["$\(body)*\(sum)", "$\(body)*\(sum.uppercased())"]).errors.isEmpty)
    }

    @Test func aBadChecksumSaysWhatWasExpected() throws {
        let error = try #require(Self.error("$GPGLL,4916.45,N,12311.12,W,225444,A,A*00"))
        #expect(error.field == "checksum")
        #expect(error.message.contains("expected 5C") && error.message.contains("found 00"))
    }

    @Test(arguments: ["$GPGLL,4916.45,N,12311.12,W,225444,A,A*5", "$GPGSA,A,1,,,,,,,,,,,,,,,*1E*43", "$GPBOD,,T,,M,,*"])
    func aBrokenChecksumIsAnError(line: String) {
        #expect(Self.error(line)?.field == "checksum")
    }

    @Test func positionSentencesNeedAChecksum() {
        #expect(Self.error("$GNRMC,001053.00,A,4404.14083,N,12118.85886,W,0.")?.field == "checksum")
        // Other sentences may lack one (banners, proprietary sentences).
        #expect(Self.decode(["$PLCS,REV,PLN012054S07,070312,145743", "$SkyTraq,Venus6", "$GP"]).errors.isEmpty)
    }

    @Test func otherSentencesAndTalkersAreSkipped() {
        let lines = [
            Self.sentence("GPGSA,A,3,25,32,12,14,,,,,,,,,2.1,1.1,1.8"), Self.sentence("GPVTG,,T,,M,0.029,N,0.053,K,A"),
            Self.sentence("PGRME,9.1,M,15.0,M,12.0,M"), "!AIVDM,1,1,,A,13aEOK?P00PD2wVMdLDRhgvL289?,0*26",
            Self.sentence("ECRMC,194101,A,4426.1130,N,07140.5596,W,5.2,77.3,160906,15.8,W"),
            Self.sentence("GPTXT,01,01,02,ANTSTATUS=OK"),
        ]
        let outcome = Self.decode(lines)
        #expect(outcome.errors.isEmpty && outcome.fixes.isEmpty)
    }

    @Test(arguments: ["GP", "GN", "GL", "GA", "BD", "GB", "GQ", "GI", "IN"])
    func gnssTalkersAreRead(talker: String) {
        let outcome = Self.decode([Self.sentence("\(talker)RMC,123519,A,4807.038,N,01131.000,E,,,230394,,")])
        #expect(outcome.fixes.count == 1)
    }

    @Test func blankLinesAndCommentsAreSkipped() {
        #expect(Self.decode(["", "   ", "\r", "# Name: Garmin 48", "#"]).errors.isEmpty)
    }

    @Test func junkBeforeTheSentenceIsDropped() {
        // Seen in gpsd's captures: a space, a stray byte, binary noise, a sentence cut short.
        let rmc = Self.sentence("GPRMC,175804,A,5125.8697,N,00524.2288,E,0.0,0.0,200610,,")
        let outcome = Self.decode([
            " \(rmc)\r", "r\(rmc)", "\u{FF}\u{01}b\(rmc)", "$GPGSV,3,1,11,23,87,270,,13,68,270,,24,60,270,\(rmc)",
        ])
        #expect(outcome.errors.isEmpty)
        #expect(outcome.fixes.count == 1 && outcome.fixes.first?.line == 1)
    }

    @Test func aLineWithoutASentenceIsMalformed() {
        let error = Self.error("4.4343,N,01025.5386,E,200002,A,D*48")
        #expect(error?.code == .malformed)
    }

    // MARK: Fields

    @Test(arguments: [("S", "W", -1.0, -1.0), ("N", "E", 1.0, 1.0), ("S", "E", -1.0, 1.0), ("N", "W", 1.0, -1.0)])
    func hemispheresGiveTheSign(northSouth: String, eastWest: String, latitudeSign: Double, longitudeSign: Double)
        throws
    {
        let line = Self.sentence("GPRMC,003956.00,A,4552.65403,\(northSouth),17030.00668,\(eastWest),,,120419,,")
        let fix = try #require(Self.decode([line]).fixes.first?.fix)
        #expect(fix.coordinate.latitude == latitudeSign * (45 + 52.65403 / 60))
        #expect(fix.coordinate.longitude == longitudeSign * (170 + 30.00668 / 60))
    }

    @Test(arguments: [
        ("GPRMC,123519,A,4860.000,N,01131.000,E,,,230394,,", "RMC latitude"),
        ("GPRMC,123519,A,9000.001,N,01131.000,E,,,230394,,", "RMC latitude"),
        ("GPGGA,123519,4807.038,N,18000.500,E,1,08,0.9,545.4,M,,,,", "GGA longitude"),
        ("GPGLL,4807.038,X,01131.000,E,123519,A,A", "GLL latitude"),
        ("GPGLL,-4807.038,N,01131.000,E,123519,A,A", "GLL latitude"),
        ("GPRMC,123519,A,4807.038,N,,,,,230394,,", "RMC longitude"),
        ("GPRMC,123519,A,4807.038,N,01131.000,E,-1.0,,230394,,", "RMC speed"),
        ("GPRMC,123519,A,4807.038,N,01131.000,E,,361,230394,,", "RMC course"),
        ("GPRMC,1235,A,4807.038,N,01131.000,E,,,230394,,", "RMC time"),
        ("GPRMC,246000,A,4807.038,N,01131.000,E,,,230394,,", "RMC time"),
        ("GPGGA,123519,4807.038,N,01131.000,E,X,08,0.9,545.4,M,,,,", "GGA quality"),
        ("GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,5e3,M,,,,", "GGA altitude"),
        ("GPGST,123519,1.2,3.0,2.0,45.0,-3.0,4.0,5.0", "GST latitude error"),
        ("GPZDA,123519,31,02,2012,,", "ZDA day"),
    ])
    func outOfRangeFieldsAreNamed(body: String, field: String) {
        #expect(Self.error(Self.sentence(body))?.field == field)
    }

    @Test func shortSentencesAreMalformed() {
        #expect(Self.error(Self.sentence("GPRMC,123519,A,4807.038,N"))?.code == .malformed)
    }

    // MARK: Validity

    @Test(arguments: [
        "GPRMC,123519,V,4807.038,N,01131.000,E,,,230394,,",
        "GPRMC,123519,A,4807.038,N,01131.000,E,,,230394,,,N",
        "GPGGA,123519,4807.038,N,01131.000,E,0,08,0.9,545.4,M,,,,",
        "GPGGA,123519,4807.038,N,01131.000,E,1,02,0.9,545.4,M,,,,",
        "GPGLL,4807.038,N,01131.000,E,123519,V,A",
        "GPGLL,4807.038,N,01131.000,E,123519,A,N",
        // A cold receiver's placeholders are not read when the sentence says it has no fix.
        "GPRMC,235946.005,V,8960.000000,N,00000.000000,E,0.000,0.00,050180,,,N",
    ])
    func invalidFixesAreNotEmitted(body: String) {
        let dated = Self.sentence("GPRMC,123518,A,4807.038,N,01131.000,E,,,230394,,")
        let outcome = Self.decode([dated, Self.sentence(body)])
        #expect(outcome.errors.isEmpty)
        #expect(outcome.fixes.map(\.line) == [1])
    }

    @Test func oneSentenceSayingInvalidSpoilsTheEpoch() {
        // Garmin in dead reckoning: GGA quality 6, RMC status V.
        let outcome = Self.decode([
            Self.sentence("GPRMC,165009.000,A,4143.6058,N,08338.0787,W,0.60,231.03,180710,,,A"),
            Self.sentence("GPGGA,165010.000,4143.6057,N,08338.0788,W,6,04,50.0,203.8,M,-33.7,M,,0000"),
            Self.sentence("GPRMC,165010.000,V,4143.6057,N,08338.0788,W,0.60,231.03,180710,,,E"),
        ])
        #expect(outcome.fixes.map(\.line) == [1])
    }

    // MARK: Real oddities

    /// gpsd's `nmea-fuzzy-cases.log` holds no bad sentences: 28 valid ones whose times (`.60`, `.70`)
    /// and 8-decimal minutes once upset gpsd's floating-point arithmetic. All must decode, exactly.
    @Test func gpsdFuzzyCasesDecodeExactly() throws {
        let url = Fixtures.dataDirectory.appendingPathComponent("nmea/nmea-fuzzy-cases.log")
        let lines = try String(contentsOf: url, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false
        )
        .map(String.init)
        let outcome = Self.decode(lines)
        #expect(outcome.errors.isEmpty)
        #expect(outcome.fixes.count == 14)
        let first = try #require(outcome.fixes.first?.fix)
        #expect(first.time == Self.time("2020-03-18T13:28:20.6Z"))
        #expect(abs(first.coordinate.latitude - (41 + 34.49821229 / 60)) < 1e-12)
        #expect(abs(first.coordinate.longitude + (93 + 45.03351845 / 60)) < 1e-12)
        #expect(
            outcome.fixes.map { $0.fix.time.microseconds % 1_000_000 } == [
                600_000, 700_000, 500_000, 100_000, 300_000, 200_000, 200_000, 600_000, 800_000, 900_000, 0, 100_000,
                700_000, 900_000,
            ])
    }

    // MARK: Hostile input

    @Test func randomBytesNeverCrash() {
        var random = SplitMix(state: 0x4E4D_4541)
        let alphabet = Array("$!*,.0123456789ABCDEFGNPRMCLSTVWZ\r#-".utf8)
        var lines: [[UInt8]] = []
        for _ in 0..<3000 {
            let length = Int.random(in: 0..<120, using: &random)
            lines.append(
                (0..<length).map { _ in
                    Bool.random(using: &random)
                        ? alphabet.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
                })
        }
        var decoder = NMEADecoder(device: "gps")
        for (index, line) in lines.enumerated() {
            _ = try? line.withUnsafeBufferPointer { buffer throws(LineError) in
                try decoder.decode(buffer, lineNumber: index + 1)
            }
        }
        _ = decoder.finish()
    }

    @Test func everyCutAndEveryMutationOfRealSentencesIsHandled() {
        let originals = [
            Self.rmc, Self.gga, Self.gst, Self.sentence("GPGLL,4807.038,N,01131.000,E,123519.00,A,A"),
            Self.sentence("GPZDA,123519.00,23,03,1994,00,00"),
        ].map { Array($0.utf8) }
        var random = SplitMix(state: 7)
        var decoder = NMEADecoder(device: "gps")
        var number = 0
        func feed(_ line: [UInt8]) {
            number += 1
            _ = try? line.withUnsafeBufferPointer { buffer throws(LineError) in
                try decoder.decode(buffer, lineNumber: number)
            }
        }
        for original in originals {
            for end in 0...original.count { feed(Array(original[..<end])) }
            for _ in 0..<2000 {
                var mutated = original
                mutated[Int.random(in: 1..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                // Keep the checksum right half of the time, so the fields themselves get tested.
                if Bool.random(using: &random), let star = mutated.lastIndex(of: UInt8(ascii: "*")) {
                    let sum = mutated[1..<star].reduce(UInt8(0), ^)
                    mutated.replaceSubrange((star + 1)..., with: Array(String(format: "%02X", sum).utf8))
                }
                feed(mutated)
            }
        }
        _ = decoder.finish()
    }
}
