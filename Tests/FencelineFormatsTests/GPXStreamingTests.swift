import Fenceline
import FencelineFormats
import Foundation
import TestSupport
import Testing

/// A GPX document read in chunks (issue 26, defect 4: GPX is parsed as it is read) gives exactly
/// the items of the whole document, and the refusals still hold across chunk boundaries.
@Suite struct GPXStreamingTests {
    /// `bytes` decoded when handed over `size` bytes at a time.
    static func decode(_ bytes: [UInt8], chunk size: Int) -> [GPXDecoder.Item] {
        var offset = 0
        return GPXDecoder.decode(
            chunks: {
                guard offset < bytes.count else { return nil }
                defer { offset += size }
                return Array(bytes[offset..<min(bytes.count, offset + size)])
            }, fileDevice: "f", deviceOverride: nil)
    }

    static let files = try! FileManager.default.contentsOfDirectory(atPath: GPXFiles.directory.path)
        .filter { $0.hasSuffix(".gpx") }.sorted()

    @Test(arguments: files)
    func everyBundledFileReadsTheSameInChunks(file: String) throws {
        let bytes = Array(try Data(contentsOf: GPXFiles.directory.appendingPathComponent(file)))
        let whole = GPXDecoder.decode(bytes, fileDevice: "f", deviceOverride: nil)
        for size in [1, 7, 4097, 65_536] {
            #expect(Self.decode(bytes, chunk: size) == whole, "\(file) in chunks of \(size)")
        }
    }

    @Test(arguments: [1, 3, 4096, 4101])
    func anEntityDeclarationSplitAcrossChunksIsRefused(size: Int) {
        let padding = String(repeating: "<!-- padding -->\n", count: 300)
        let text = #"<?xml version="1.0"?>"# + "\n" + padding + #"<!DOCTYPE gpx [<!ENTITY a "A">]><gpx>&a;</gpx>"#
        let items = Self.decode(Array(text.utf8), chunk: size)
        #expect(items.count == 1)
        #expect(items.first?.line == 302)
        #expect(items.first?.error?.message.contains("declares an entity") == true, "\(items)")
        // The same in UTF-16, split at odd bytes too.
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in text.utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let wide = Self.decode(utf16, chunk: size | 1)
        #expect(wide.first?.error?.message.contains("declares an entity") == true, "\(wide)")
    }
}
