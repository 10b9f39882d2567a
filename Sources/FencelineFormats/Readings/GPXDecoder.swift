public import Fenceline
import Foundation
import FoundationXML

/// Decodes GPX 1.0 and 1.1 documents into position readings (SPEC §3.2), with a SAX parse
/// (FoundationXML's `XMLParser`, libxml2 underneath): no document tree is built.
///
/// What becomes a reading:
/// - Every `trkpt` (in `trk`/`trkseg`), `rtept` (in `rte`) and `wpt`, with its `lat`/`lon`
///   attributes and its `<time>` child. `<ele>` is the altitude; GPX 1.0's `<speed>` (m/s) and
///   `<course>` (degrees) are the speed and heading. GPX 1.1 keeps those in extensions, and all
///   `<extensions>` content is ignored whatever its namespace (Garmin `TrackPointExtension`
///   included), so a 1.1 fix has no speed or heading.
/// - Accuracy stays `nil`: GPX has no accuracy in metres, only `<hdop>`/`<pdop>`, which are
///   dimensionless factors. Turning them into metres needs the receiver's range error, which the
///   file does not give; a guessed factor would make up a precision the data lacks.
/// - Times are xsd:dateTime (RFC 3339, any number of fractional digits, kept to the microsecond).
///   A time without a zone is UTC, as the GPX schema says.
/// - `<fix>none</fix>` means the receiver had no position: such a point is an error item.
///
/// The device of a point is `deviceOverride` (`--device`) when given; otherwise the trimmed
/// `<name>` of its `trk` or `rte`, or `fileDevice` when that name is missing or empty. A track's
/// points are held until the track ends, so a `<name>` written after the points still names them.
/// A `wpt` belongs to `fileDevice`.
///
/// Elements are matched by local name, so GPX 1.0 and 1.1, a default or a prefixed namespace, or
/// none at all read alike; a byte order mark, the declared encoding (UTF-16, ISO-8859-1…),
/// comments and CDATA are libxml2's business.
///
/// Hostile input ends in an error item instead of a crash or a hang. A document that declares
/// entities (`<!ENTITY`) is refused before parsing, as are encodings in which that declaration
/// could hide from the check (UCS-4, EBCDIC, UTF-7…); external entities and DTDs are never
/// loaded. The decoder also stops when the text it is handed outgrows the document by more than
/// ``expansionAllowance`` bytes, keeps at most ``maximumFieldBytes`` of any one field and refuses
/// elements nested deeper than ``maximumDepth``. Document-level errors have code `.malformed`.
public enum GPXDecoder {
    /// One point of the document: its 1-based line in the file and the fix, or why it is not one.
    public struct Item: Hashable, Sendable {
        /// The line of the point's start tag (the line where that tag ends, when it spans several);
        /// for a document that is not well-formed, the line where the XML parser stopped.
        public var line: Int
        /// The fix, or the error naming the field at fault.
        public var result: Result<Reading, LineError>

        /// Creates an item.
        public init(line: Int, result: Result<Reading, LineError>) {
            self.line = line
            self.result = result
        }
    }

    /// How much more text (characters and attribute values, DTD attribute defaults included) than
    /// the document's own bytes the parser may hand over before the document is refused.
    public static let expansionAllowance = 1 << 20
    /// The most bytes kept of a field's text (a time, a number, a track name).
    public static let maximumFieldBytes = 4096
    /// The most harmless XML errors (namespace warnings) a document may raise before it is refused.
    public static let maximumWarnings = 1000
    /// The deepest element nesting accepted; GPX itself needs six levels.
    public static let maximumDepth = 256

    /// Decodes a whole GPX document. `fileDevice` is the device for points whose track/route has no
    /// name (the caller passes the file name without extension); `deviceOverride` (--device) names
    /// the device of every point. Items come in document order. A document that is not well-formed
    /// XML ends with an error item at the line where the XML parser stopped (the points before it are kept).
    ///
    /// Points without a time, with an unreadable time, or with `lat`/`lon` missing, not numbers or
    /// out of range are error items naming the field (`time`, `lat`, `lon`, `ele`, `speed`,
    /// `course`, `fix`); the points after them are read as usual.
    public static func decode(_ bytes: [UInt8], fileDevice: String, deviceOverride: String?) -> [Item] {
        var handed = false
        return decode(
            chunks: {
                guard !handed else { return nil }
                handed = true
                return bytes
            }, fileDevice: fileDevice, deviceOverride: deviceOverride)
    }

    /// Decodes a GPX document read in chunks (`next` returns `nil` at its end), holding one chunk
    /// at a time: a file of any size is read in the memory its points take. Items are those of
    /// ``decode(_:fileDevice:deviceOverride:)`` for the whole document.
    public static func decode(
        chunks next: @escaping () -> [UInt8]?, fileDevice: String, deviceOverride: String?
    ) -> [Item] {
        let handler = Handler(fileDevice: fileDevice, deviceOverride: deviceOverride, textBudget: expansionAllowance)
        var prescan = Prescan()
        var refusal: (line: Int, message: String)?
        var first = true
        // Each chunk is scanned before libxml2 sees it; the first is at least a few KiB (or the
        // whole document), so the XML declaration's encoding is in it.
        let stream = ChunkStream {
            guard refusal == nil, var chunk = next() else { return nil }
            if first {
                first = false
                while chunk.count < 4096, let more = next() { chunk += more }
            }
            refusal = prescan.feed(chunk)
            guard refusal == nil else { return nil }
            handler.allowText(chunk.count)
            return chunk
        }
        // A stream feeds libxml2 in chunks; handed all at once, a document past 10 MB ends in
        // libxml2's "huge input lookup" error.
        let parser = XMLParser(stream: stream)
        parser.delegate = handler
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        parser.externalEntityResolvingPolicy = .never
        let succeeded = parser.parse()
        if let refusal {
            return [Item(line: refusal.line, result: .failure(LineError(code: .malformed, message: refusal.message)))]
        }
        handler.finish(parser, succeeded: succeeded)
        return handler.items
    }

    /// The reason for a libxml2 error code (`xmlParserErrors`), said so that the file can be fixed.
    static func describeXMLError(_ code: Int) -> String {
        let reason =
            switch code {
            case 1:
                "an attribute value or a text is longer than the XML parser accepts (10 MB), or the parser hit an internal limit"
            case 2: "the parser ran out of memory or hit a size limit"
            case 4: "this is not XML: a GPX file starts with <?xml …?> or <gpx>"
            case 5: "the XML ends early (an element is not closed) or goes on after </gpx>; is the file truncated?"
            case 9, 81: "a character is invalid in the declared encoding; check encoding=… in <?xml …?>"
            case 26: "an entity is not defined; GPX text needs only &amp; &lt; &gt; &quot; &apos;"
            case 73, 77: "a tag is not closed with >, or the file ends inside it"
            case 76: "an end tag does not match its start tag"
            default: "the XML is not well-formed"
            }
        return "\(reason) (libxml2 error \(code))"
    }

    /// Whether a libxml2 error code is only a warning or a namespace complaint, after which the
    /// document still reads correctly (an undeclared prefix, a relative namespace URI).
    static func isHarmless(_ code: Int) -> Bool {
        [27, 93, 97, 98, 99, 100, 102, 106, 107].contains(code) || (200..<300).contains(code)
    }
}

/// An `InputStream` over chunks handed out by a closure, for `XMLParser(stream:)`, which only
/// opens, reads and closes its stream.
private final class ChunkStream: InputStream {
    private let next: () -> [UInt8]?
    private var chunk: [UInt8] = []
    private var offset = 0
    private var ended = false

    init(next: @escaping () -> [UInt8]?) {
        self.next = next
        super.init(data: Data())
    }

    override func open() {}
    override func close() {}
    override var hasBytesAvailable: Bool { !ended }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        while offset == chunk.count {
            guard !ended, let more = next() else {
                ended = true
                return 0
            }
            chunk = more
            offset = 0
        }
        let count = min(length, chunk.count - offset)
        chunk.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + offset, count: count) }
        offset += count
        return count
    }
}
