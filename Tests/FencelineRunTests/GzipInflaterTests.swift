import FencelineFormats
import FencelineRun
import Foundation
import Testing

/// `.gz` inputs inflate to exactly what was compressed, whatever wrote the stream: `gzip` at every
/// level, members of every size one after another (stored, fixed and dynamic blocks), and headers
/// with every optional field; a header whose own check fails is damage.
@Suite struct GzipInflaterTests {
    func path(_ bytes: [UInt8]) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("inflate-\(UUID().uuidString).gz")
        try Data(bytes).write(to: url)
        return url.path
    }

    /// `gzip -<level>` of `bytes` from a named file, so its header carries the name.
    func gzip(_ bytes: [UInt8], level: Int) throws -> [UInt8] {
        let plain = FileManager.default.temporaryDirectory.appendingPathComponent("plain-\(UUID().uuidString).txt")
        try Data(bytes).write(to: plain)
        defer { try? FileManager.default.removeItem(at: plain) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-\(level)", "-c", plain.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(data)
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func littleEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// A member written by hand: a header with FTEXT, FHCRC, FEXTRA, FNAME and FCOMMENT, then
    /// `content` in one stored deflate block.
    static func handMadeMember(_ content: [UInt8], breakingHeaderCheck: Bool = false) -> [UInt8] {
        var header: [UInt8] = [0x1F, 0x8B, 8, 0b0001_1111, 0, 0, 0, 0, 0, 3]
        header += [5, 0] + Array("extra".utf8)
        header += Array("name.ndjson".utf8) + [0]
        header += Array("a comment".utf8) + [0]
        let headerCheck = UInt16(truncatingIfNeeded: crc32(header)) ^ (breakingHeaderCheck ? 1 : 0)
        header += [UInt8(truncatingIfNeeded: headerCheck), UInt8(headerCheck >> 8)]
        let length = UInt16(content.count)
        let block: [UInt8] =
            [
                1, UInt8(truncatingIfNeeded: length), UInt8(length >> 8), UInt8(truncatingIfNeeded: ~length),
                UInt8(~length >> 8),
            ]
            + content
        return header + block + littleEndian(crc32(content)) + littleEndian(UInt32(content.count))
    }

    @Test(arguments: [1, 6, 9])
    func membersOfEverySizeInflateToWhatWasCompressed(level: Int) throws {
        var generator = Xorshift(state: UInt64(level) &* 0x9E37_79B9_7F4A_7C15)
        let lines = (0..<40_000).map { #"{"device":"d\#($0 % 97)","time":\#($0),"lat":52.\#($0 % 1000),"lon":4.1}"# }
        let text = Array((lines.joined(separator: "\n") + "\n").utf8)
        // Incompressible bytes make gzip write stored blocks; an empty member and a one-byte one too.
        let noise = (0..<300_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let parts: [[UInt8]] = [[], Array(text[..<1]), Array(text[1...]), noise, [], Array("\n".utf8)]
        var compressed: [UInt8] = []
        for part in parts { compressed += try gzip(part, level: level) }
        let reader = try LineReader(path: try path(compressed))
        let inflated = try reader.readAll()
        #expect(reader.failure == nil)
        #expect(inflated == parts.flatMap { $0 })
    }

    @Test func headersWithEveryOptionalFieldAreRead() throws {
        let content = Array(#"{"device":"a","time":1,"lat":1,"lon":2}"#.utf8) + [0x0A]
        let reader = try LineReader(path: try path(Self.handMadeMember(content) + gzip(content, level: 6)))
        #expect(try reader.readAll() == content + content)
        #expect(reader.failure == nil)
    }

    @Test func aHeaderWhoseCheckFailsIsDamage() throws {
        let content = Array(#"{"device":"a","time":1,"lat":1,"lon":2}"#.utf8) + [0x0A]
        let reader = try LineReader(path: try path(Self.handMadeMember(content, breakingHeaderCheck: true)))
        #expect(try reader.readAll().isEmpty)
        #expect(
            reader.failure?.message.contains("the gzip stream is corrupt") == true,
            "\(String(describing: reader.failure))")
    }
}

/// Seeded noise for the stored blocks.
struct Xorshift {
    var state: UInt64

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
