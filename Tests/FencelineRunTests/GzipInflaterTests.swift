import FencelineFormats
import FencelineRun
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `.gz` inputs inflate to exactly what was compressed, whatever wrote the stream and however it
/// arrives: `gzip` at every level, members of every size one after another (stored, fixed and
/// dynamic blocks), headers with every optional field, split across reads or arriving through a
/// pipe in pieces; damage gives the same lines through a pipe as from a file, and a header whose
/// own check fails is damage.
@Suite struct GzipInflaterTests {
    func path(_ bytes: [UInt8]) throws -> String {
        let url = Scratch.root.appendingPathComponent("inflate-\(UUID().uuidString).gz")
        try Data(bytes).write(to: url)
        return url.path
    }

    func gzip(_ bytes: [UInt8], level: Int) throws -> [UInt8] { try Fixtures.gzip(bytes, level: level) }

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

    /// The optional fields of a gzip header (RFC 1952 FLG bits).
    struct HeaderFields: OptionSet, Sendable, CustomTestStringConvertible {
        let rawValue: UInt8
        static let text = HeaderFields(rawValue: 1)
        static let check = HeaderFields(rawValue: 2)
        static let extra = HeaderFields(rawValue: 4)
        static let name = HeaderFields(rawValue: 8)
        static let comment = HeaderFields(rawValue: 16)
        static let all: HeaderFields = [.text, .check, .extra, .name, .comment]
        var testDescription: String { "flags \(rawValue)" }
    }

    /// A member written by hand: a header with `fields`, then `content` in one stored deflate
    /// block (at most 65,535 bytes), so its length is exactly known.
    static func handMadeMember(
        _ content: [UInt8], fields: HeaderFields = .all, breakingHeaderCheck: Bool = false
    ) -> [UInt8] {
        var header: [UInt8] = [0x1F, 0x8B, 8, fields.rawValue, 0, 0, 0, 0, 0, 3]
        if fields.contains(.extra) { header += [5, 0] + Array("extra".utf8) }
        if fields.contains(.name) { header += Array("name.ndjson".utf8) + [0] }
        if fields.contains(.comment) { header += Array("a comment".utf8) + [0] }
        if fields.contains(.check) {
            let headerCheck = UInt16(truncatingIfNeeded: crc32(header)) ^ (breakingHeaderCheck ? 1 : 0)
            header += [UInt8(truncatingIfNeeded: headerCheck), UInt8(headerCheck >> 8)]
        }
        let length = UInt16(content.count)
        let block: [UInt8] =
            [
                1, UInt8(truncatingIfNeeded: length), UInt8(length >> 8), UInt8(truncatingIfNeeded: ~length),
                UInt8(~length >> 8),
            ]
            + content
        return header + block + littleEndian(crc32(content)) + littleEndian(UInt32(content.count))
    }

    /// `count` bytes of reading lines, the last cut short and ended by a newline.
    static func lines(_ count: Int) -> [UInt8] {
        let line = Array(#"{"device":"a","time":1,"lat":1,"lon":2}"#.utf8) + [0x0A]
        var bytes: [UInt8] = []
        while bytes.count < count - 1 { bytes += line }
        return Array(bytes[..<(count - 1)]) + [0x0A]
    }

    /// A FIFO that a shell fills with `bytes` in two writes `pause` seconds apart (the first
    /// `split` bytes, then the rest), as a slow pipe delivers them; read it before the shell ends.
    func pipe(_ bytes: [UInt8], splitAt split: Int, pause: Double = 0.05) throws -> (path: String, writer: Process) {
        let file = try path(bytes)
        let fifo = file + ".fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = [
            "-c", #"{ head -c "$2" "$0"; sleep "$3"; tail -c +$(($2 + 1)) "$0"; } > "$1""#, file, fifo, "\(split)",
            "\(pause)",
        ]
        try writer.run()
        return (fifo, writer)
    }

    /// Every line of `path` as `forEachLine` reads them (a pipe's reads ask for small amounts),
    /// and the damage that ended them.
    func linesRead(_ path: String) throws -> (lines: [[UInt8]], failure: String?) {
        let reader = try LineReader(path: path)
        var lines: [[UInt8]] = []
        try reader.forEachLine { line, _ in
            lines.append(Array(line))
            return true
        }
        return (lines, reader.failure?.message)
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

    /// A stream of many more chunks than are inflated ahead (48 MiB): the chunks the reader has
    /// emptied are inflated into again, and every byte comes out in order.
    @Test func aStreamLongerThanTheInflatedAheadReadsWhole() throws {
        let text =
            Array(
                (0..<1_000_000).map { #"{"device":"d\#($0 % 977)","time":\#($0),"lat":52.\#($0 % 9973),"lon":4.1}"# }
                    .joined(separator: "\n").utf8) + [0x0A]
        #expect(text.count > 48 << 20)
        let reader = try LineReader(path: try path(try gzip(text, level: 1)))
        let inflated = try reader.readAll()
        #expect(reader.failure == nil)
        #expect(inflated.count == text.count)
        #expect(inflated == text)
    }

    /// Progress counts every compressed byte, the 64 KiB the reader sniffs first included: a
    /// file read to its end has read its whole size.
    @Test(arguments: [300, 70_000, 400_000])
    func aFileReadToItsEndHasReadItsSize(lines: Int) throws {
        let text = (0..<lines).map { #"{"device":"d\#($0 % 7)","time":\#($0),"lat":1,"lon":2}"# }
        let compressed = try gzip(Array((text.joined(separator: "\n") + "\n").utf8), level: 6)
        let reader = try LineReader(path: try path(compressed))
        var count = 0
        try reader.forEachLine { _, _ in
            count += 1
            return true
        }
        #expect(count == lines)
        #expect(reader.bytesRead == compressed.count)
    }

    @Test func headersWithEveryOptionalFieldAreRead() throws {
        let content = Array(#"{"device":"a","time":1,"lat":1,"lon":2}"#.utf8) + [0x0A]
        let reader = try LineReader(path: try path(Self.handMadeMember(content) + gzip(content, level: 6)))
        #expect(try reader.readAll() == content + content)
        #expect(reader.failure == nil)
    }

    /// A second member whose header starts a few bytes before a 64 KiB read ends, so that it is
    /// read in two pieces, whatever optional fields it has.
    @Test(arguments: [HeaderFields.all, [.name, .comment], [.extra, .name], [.name, .check], []])
    func headersSplitAcrossReadsAreRead(fields: HeaderFields) throws {
        let second = Self.lines(300)
        for before in [1, 2, 3, 4, 5, 9, 10, 11, 12, 13, 16, 20, 24, 30, 40] {
            // The first member ends `before` bytes short of 65,536: 23 bytes of it are framing.
            let first = Self.lines(65_536 - before - 23)
            let bytes = Self.handMadeMember(first, fields: []) + Self.handMadeMember(second, fields: fields)
            let reader = try LineReader(path: try path(bytes))
            #expect(try reader.readAll() == first + second, "second header from \(65_536 - before)")
            #expect(reader.failure == nil, "\(String(describing: reader.failure))")
        }
    }

    /// A header that arrives through a pipe in two pieces, split anywhere in it.
    @Test(arguments: [HeaderFields.all, [.name, .check], [.extra, .name, .comment]])
    func headersArrivingInPiecesAreRead(fields: HeaderFields) throws {
        let content = Self.lines(2_000)
        let member = Self.handMadeMember(content, fields: fields)
        let headerLength = member.count - content.count - 13
        for split in Set([3, 4, 10, 11, headerLength / 2, headerLength - 2, headerLength - 1, headerLength]) {
            let (fifo, writer) = try pipe(member, splitAt: split)
            let read = try linesRead(fifo)
            writer.waitUntilExit()
            #expect(read.failure == nil, "split at \(split): \(read.failure ?? "")")
            #expect(read.lines.flatMap { $0 + [0x0A] } == content, "split at \(split)")
        }
    }

    /// A stream cut short or damaged gives the same lines and the same error through a pipe (small
    /// reads) as from the file (large ones): nothing inflated before the damage is held back.
    @Test(arguments: ["cut", "corrupt"])
    func damageReadsAlikeThroughAPipe(damage: String) throws {
        let text = (0..<40_000).map { #"{"device":"d\#($0 % 89)","time":\#($0),"lat":52.\#($0 % 997),"lon":4.1}"# }
        let whole = try gzip(Array((text.joined(separator: "\n") + "\n").utf8), level: 6)
        for fraction in stride(from: 0.3, to: 0.99, by: 0.023) {
            var bytes = whole
            let at = Int(Double(whole.count) * fraction)
            if damage == "cut" { bytes.removeSubrange(at...) } else { bytes[at] ^= 0xA5 }
            let fromFile = try linesRead(try path(bytes))
            let (fifo, writer) = try pipe(bytes, splitAt: bytes.count / 2, pause: 0)
            let throughPipe = try linesRead(fifo)
            writer.waitUntilExit()
            #expect(fromFile.failure?.contains("the gzip stream is") == true, "\(fromFile.failure ?? "no damage")")
            #expect(throughPipe.failure == fromFile.failure, "at \(at)")
            #expect(
                throughPipe.lines == fromFile.lines,
                "at \(at): \(throughPipe.lines.count) against \(fromFile.lines.count) lines")
            #expect(fromFile.lines.count > Int(Double(text.count) * fraction) - 2_000, "at \(at)")
        }
    }

    @Test func aHeaderWhoseCheckFailsIsDamage() throws {
        let content = Array(#"{"device":"a","time":1,"lat":1,"lon":2}"#.utf8) + [0x0A]
        let reader = try LineReader(path: try path(Self.handMadeMember(content, breakingHeaderCheck: true)))
        #expect(try reader.readAll().isEmpty)
        #expect(
            reader.failure?.message.contains("the gzip stream is corrupt (the header's CRC-16 check failed)") == true,
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
