import Fenceline
import Foundation
import FoundationXML

extension GPXDecoder {
    /// The SAX side of ``GPXDecoder``: follows the element nesting and turns points into items.
    ///
    /// Points are finished when their element ends; while a `trk` or `rte` is open they wait in it,
    /// because its `<name>` (their device) may come after them. The first fatal XML error stops the
    /// parse: the waiting points are kept, the point being read is dropped, and an error item ends
    /// the list. libxml2 runs in recovery mode under `XMLParser` and would go on past the error
    /// with a guessed structure, so the handler aborts the parser itself.
    final class Handler: NSObject, XMLParserDelegate {
        private(set) var items: [Item] = []

        private let fileDevice: String
        private let deviceOverride: String?
        /// Text (characters and attribute values) the parser may still hand over before the
        /// document counts as an entity expansion attack.
        private var textBudget: Int

        private var depth = 0
        private var sawRoot = false
        private var stopped = false
        /// The depth of an `<extensions>` element whose content is being skipped.
        private var skippedDepth: Int?
        private var container: Container?
        private var point: (draft: PointDraft, depth: Int, ownDevice: String?)?
        /// The element whose text is being collected, and where.
        private var capture: (name: String, depth: Int)?
        private var text = ""
        private var textIsOverlong = false
        /// Harmless XML errors (namespace warnings) seen so far.
        private var harmlessErrors = 0

        /// An open `trk` or `rte` with the points read in it so far.
        private struct Container {
            var element: String
            var depth: Int
            var name: String?
            var nameIsOverlong = false
            /// Each draft with its own device (a `wpt` misplaced in a track), or `nil` for the track's.
            var points: [(draft: PointDraft, device: String?)] = []
        }

        init(fileDevice: String, deviceOverride: String?, textBudget: Int) {
            self.fileDevice = fileDevice
            self.deviceOverride = deviceOverride
            self.textBudget = textBudget
        }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String]
        ) {
            guard !stopped else { return }
            depth += 1
            for (key, value) in attributeDict { spend(key.utf8.count + value.utf8.count, parser) }
            guard !stopped else { return }
            guard depth <= maximumDepth else {
                return stop(parser, "elements are nested more than \(maximumDepth) deep; GPX needs six levels")
            }
            if skippedDepth != nil { return }
            let name = Self.localName(elementName)
            guard sawRoot else {
                sawRoot = true
                guard name == "gpx" else {
                    return stop(parser, "the root element is <\(elementName)>, not <gpx>; is this a GPX file?")
                }
                return
            }
            if let point {
                if depth == point.depth + 1, PointDraft.capturedFields.contains(name) {
                    startCapture(name)
                } else if name == "extensions" {
                    skippedDepth = depth
                }
                return
            }
            switch name {
            case "extensions":
                skippedDepth = depth
            case "trk", "rte":
                if container == nil { container = Container(element: name, depth: depth) }
            case "name" where container.map({ $0.depth + 1 == depth }) ?? false:
                startCapture(name)
            case "trkpt", "rtept", "wpt":
                let draft = PointDraft(
                    element: name, line: parser.lineNumber, lat: attributeDict["lat"], lon: attributeDict["lon"])
                let inContainer = name != "wpt" && container != nil
                point = (draft, depth, inContainer ? nil : fileDevice)
            default:
                break
            }
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            guard !stopped else { return }
            defer { depth -= 1 }
            if let skipped = skippedDepth {
                if depth == skipped { skippedDepth = nil }
                return
            }
            if let capture, capture.depth == depth {
                self.capture = nil
                if point != nil {
                    point?.draft.set(capture.name, to: text, overlong: textIsOverlong)
                } else if container != nil, container?.name == nil {
                    container?.name = text.trimmingXMLSpace
                    container?.nameIsOverlong = textIsOverlong
                }
                return
            }
            if let point, point.depth == depth {
                self.point = nil
                if container != nil {
                    container?.points.append((point.draft, point.ownDevice))
                } else {
                    append(point.draft, device: point.ownDevice ?? fileDevice)
                }
                return
            }
            if container?.depth == depth { flushContainer() }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            collect(string, parser)
        }

        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            collect(String(decoding: block, as: UTF8.self), parser)
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            let code = (parseError as NSError).code
            guard !stopped else { return }
            guard isHarmless(code) else { return stop(parser, describeXMLError(code)) }
            // FoundationXML leaks a little memory with every error it reports, warnings included:
            // a document made of warnings is stopped before that adds up.
            harmlessErrors += 1
            if harmlessErrors > maximumWarnings {
                stop(
                    parser,
                    "over \(maximumWarnings) XML warnings (\(describeXMLError(code))); declare the namespaces the file uses"
                )
            }
        }

        /// Called once `parse()` returns: reports a failure no callback announced, and a document
        /// without any element.
        func finish(_ parser: XMLParser, succeeded: Bool) {
            guard !stopped else { return }
            if !succeeded, let error = parser.parserError, !isHarmless((error as NSError).code) {
                return stop(parser, describeXMLError((error as NSError).code))
            }
            if !sawRoot {
                return stop(parser, "the document has no <gpx> element: it is empty or not XML")
            }
            flushContainer()
        }

        /// Ends the open `trk` or `rte`, if any, appending its points.
        private func flushContainer() {
            if let container { flush(container) }
            container = nil
        }

        private func startCapture(_ name: String) {
            capture = (name, depth)
            text = ""
            textIsOverlong = false
        }

        private func collect(_ string: String, _ parser: XMLParser) {
            guard !stopped else { return }
            let count = string.utf8.count
            spend(count, parser)
            guard capture != nil, !stopped, skippedDepth == nil else { return }
            if text.utf8.count + count > maximumFieldBytes {
                textIsOverlong = true
            } else {
                text += string
            }
        }

        /// Adds a chunk's worth of bytes to the text the parser may hand over.
        func allowText(_ count: Int) {
            textBudget += count
        }

        private func spend(_ count: Int, _ parser: XMLParser) {
            textBudget -= count
            if textBudget < 0 {
                stop(
                    parser,
                    "the document expands to over \(expansionAllowance) bytes more text than it holds (DTD attribute defaults?); GPX needs no DTD"
                )
            }
        }

        /// The items of a finished (or interrupted) track or route, named now that its name is known.
        private func flush(_ container: Container) {
            let name = container.name ?? ""
            let nameError = LineError(
                field: "name",
                message:
                    "the <name> of this <\(container.element)> is longer than \(maximumFieldBytes) bytes; shorten it or pass --device"
            )
            for (draft, device) in container.points {
                let usesName = device == nil && deviceOverride == nil
                append(
                    draft, device: device ?? (name.isEmpty ? fileDevice : name),
                    failure: usesName && container.nameIsOverlong ? nameError : nil)
            }
        }

        private func append(_ draft: PointDraft, device: String, failure: LineError? = nil) {
            let device = deviceOverride ?? device
            let result =
                failure.map { Result.failure($0) }
                ?? Result { () throws(LineError) in try draft.reading(device: device) }
            items.append(Item(line: draft.line, result: result))
        }

        /// Ends the parse with an error item at the parser's line, keeping the points read so far.
        private func stop(_ parser: XMLParser, _ message: String) {
            guard !stopped else { return }
            stopped = true
            flushContainer()
            point = nil
            items.append(
                Item(line: max(parser.lineNumber, 1), result: .failure(LineError(code: .malformed, message: message))))
            parser.abortParsing()
        }

        /// `trkpt` for `trkpt`, `gpx:trkpt` or `g:trkpt`.
        private static func localName(_ name: String) -> String {
            guard let colon = name.utf8.lastIndex(of: UInt8(ascii: ":")) else { return name }
            return String(name[name.utf8.index(after: colon)...])
        }
    }
}
