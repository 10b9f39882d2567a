import Foundation
import TestSupport
import Testing

@testable import Fenceline

/// RFC 3339 parsing, and the stream parser that reuses the last minute: it must agree with the
/// plain parser on every input, whatever came before.
@Suite struct RFC3339Tests {
    @Test(arguments: [
        ("2026-03-02T08:00:00Z", Int64(1_772_438_400_000_000)),
        ("2026-03-02t08:00:00z", 1_772_438_400_000_000),
        ("2026-03-02 09:00:00.25+01:00", 1_772_438_400_250_000),
        ("2026-03-02T08:00:00.1234567Z", 1_772_438_400_123_456),
        ("2026-03-02T08:00:00.1Z", 1_772_438_400_100_000),
        ("2026-03-02T08:00:00.000001Z", 1_772_438_400_000_001),
        ("2026-03-02T08:00:00.0000009Z", 1_772_438_400_000_000),  // digits past the sixth are dropped
        ("2026-03-02T07:59:60Z", 1_772_438_400_000_000),  // a leap second: the next minute's first instant
        ("2024-02-29T00:00:00-00:30", 1_709_166_600_000_000),
    ])
    func validTimes(text: String, microseconds: Int64) {
        #expect(Timestamp(rfc3339: text)?.microseconds == microseconds)
    }

    @Test(arguments: [
        "2026-03-02T08:00:00", "2026-03-02T08:00Z", "2026-02-30T08:00:00Z", "2026-03-02T24:00:00Z",
        "2026-03-02T08:60:00Z", "2026-03-02T08:00:61Z", "2026-03-02T08:00:00.Z", "2026-03-02T08:00:00+1:00",
        "2026-03-02T08:00:00+24:00", "2026-03-02T08:00:00Zjunk", "2026-03-02X08:00:00Z", "", "2026",
    ])
    func invalidTimes(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"),
        (1_772_438_400_250_999, "2026-03-02T08:00:00.250Z"),  // milliseconds, truncated
        (1_772_438_400_000_999, "2026-03-02T08:00:00.000Z"),  // not whole: milliseconds, even none
        (951_782_399_001_000, "2000-02-28T23:59:59.001Z"),
        (-1_000_000, "1969-12-31T23:59:59Z"),
        (253_402_300_799_000_000, "9999-12-31T23:59:59Z"),
        (253_402_300_800_000_000, "10000-01-01T00:00:00Z"),  // not written into a buffer
    ])
    func formattedTimes(microseconds: Int64, text: String) {
        let time = Timestamp(microseconds: microseconds)
        #expect(time.rfc3339 == text)
        let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            time.writeRFC3339(into: buffer).map { String(decoding: buffer[..<$0], as: UTF8.self) }
        }
        #expect(written == (text.count <= 24 && !text.hasPrefix("10000") ? text : nil))
    }

    /// Formatting gives what Foundation's ISO 8601 formatter gives for the same instant, and parses back.
    @Test func formattingAgreesWithFoundationAndRoundTrips() {
        var generator = SplitMix(state: 23)
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        for _ in 0..<2_000 {
            let seconds = Int64.random(in: -2_000_000_000...4_000_000_000, using: &generator)
            let millis = Int64.random(in: 0..<1000, using: &generator)
            let time = Timestamp(microseconds: seconds * 1_000_000 + millis * 1000)
            let text = time.rfc3339
            #expect(Timestamp(rfc3339: text) == time, "\(text)")
            let whole = formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
            #expect(text.prefix(19) == whole.prefix(19), "\(text) vs \(whole)")
        }
    }

    @Test func streamParserAgreesWithThePlainOne() {
        var generator = SplitMix(state: 17)
        var parser = RFC3339StreamParser()
        let prefixes = ["2026-03-02T08:00:", "2026-03-02T08:01:", "2026-02-28T23:59:", "2024-02-29 12:30:"]
        let suffixes = [
            "00Z", "59.999Z", "60Z", "61Z", "07.5+02:00", "07-03:30", "1Z", "07", "07.Z", "00z", "30.123456789Z",
        ]
        for _ in 0..<5000 {
            var text =
                prefixes[Int.random(in: 0..<prefixes.count, using: &generator)]
                + suffixes[Int.random(in: 0..<suffixes.count, using: &generator)]
            if Int.random(in: 0..<20, using: &generator) == 0 { text = "2026-13-02T08:00:00Z" }  // a bad date
            if Int.random(in: 0..<20, using: &generator) == 0 { text = String(text.dropLast(3)) }  // truncated
            let expected = Timestamp(rfc3339: text)
            let bytes = Array(text.utf8)
            let streamed = bytes.withUnsafeBufferPointer { parser.parse($0) }
            #expect(streamed == expected, "\(text)")
        }
    }
}
