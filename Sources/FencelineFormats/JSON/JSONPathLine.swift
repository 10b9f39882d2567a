/// Finds the line of a JSON document on which the value at a catalog issue's path starts, so that
/// a catalog error can be reported as `file:line: …` like a bad reading line.
///
/// A path is what ``CatalogIssue/path`` holds: member names joined by `.`, with `[n]` for the n-th
/// element of an array (`requests[1].trigger.radius`, `features[3].properties.radius`). Names are
/// joined as they are, without escaping, so a member whose name holds a `.` or a `[` is found by
/// trying each way of cutting the path against the names the object really has.
package enum JSONPathLine {
    /// The 1-based line of the value at each of `paths` in the JSON document `bytes`, in order.
    ///
    /// - The empty path is the whole document: the line its top-level value starts on.
    /// - A path whose end is missing (a missing `id`, an index past the end of an array) gets the
    ///   line of the deepest value it reaches, such as the `{` of the request that lacks the `id`.
    /// - `nil` when not even the path's first member or element is there, or the document is not
    ///   valid JSON (its syntax error already carries a line and column).
    ///
    /// Lines are counted at LF bytes, so a CRLF file counts as its editor shows it; a UTF-8
    /// byte-order mark is skipped. The document is parsed once for all the paths, and the lists
    /// of its top level (`requests`, `features`, and any other that a path indexes into) are read
    /// one element at a time, so time and memory stay those of one decode however many paths
    /// there are.
    package static func lines(of paths: [String], in bytes: [UInt8]) -> [Int?] {
        bytes.withUnsafeBufferPointer { buffer in
            lineNumbers(of: offsets(of: paths, in: buffer), in: buffer)
        }
    }

    /// The 1-based line of the value at `path` in the JSON document `bytes`; see ``lines(of:in:)``.
    package static func line(of path: String, in bytes: [UInt8]) -> Int? {
        lines(of: [path], in: bytes)[0]
    }

    /// A path whose element of a deferred list is found only when the list is read.
    private struct Waiting {
        var path: Int
        var element: Int
        /// The offset in the path's steps after the element's `[n]`.
        var rest: Int
    }

    /// A path as the walker reads it: every name after a `.`, the first one included.
    private static func steps(of path: String) -> [UInt8] {
        path.isEmpty || path.hasPrefix("[") ? Array(path.utf8) : Array(("." + path).utf8)
    }

    /// The byte offset at which the value each path reaches starts.
    private static func offsets(of paths: [String], in bytes: UnsafeBufferPointer<UInt8>) -> [Int?] {
        // A catalog's request list, and any top-level list a path indexes into, is left off the
        // tape as the catalog decoder leaves it: a tape of a whole large catalog would take several
        // times its size, even when the only issue is in `defaults`.
        let lists = Set(paths.compactMap { path in path.firstIndex(of: "[").map { String(path[..<$0]) } })
            .union(["requests", "features"])
        guard let document = try? JSONTape.parse(bytes, deferringListsNamed: lists) else {
            return paths.map { _ in nil }
        }
        return withExtendedLifetime(document) {
            var offsets: [Int?] = []
            var waiting: [Int: [Waiting]] = [:]  // by the node of the list
            var walker = PathWalker(tape: document)
            for (number, path) in paths.enumerated() {
                let steps = steps(of: path)
                let reach = walker.reach(steps, from: 0, at: 0)
                guard reach.left < steps.count || steps.isEmpty else {
                    offsets.append(nil)
                    continue
                }
                offsets.append(document.nodes[reach.node].start)
                if let element = reach.deferredElement {
                    waiting[reach.node, default: []].append(
                        Waiting(path: number, element: element, rest: steps.count - reach.left))
                }
            }
            // Every deferred list is read to its end, those no path goes into too: it was only
            // matched for brackets, and a document with a syntax error in it has no lines to give.
            let members = document.root.members?.map(\.value.index) ?? []
            for list in members where document.nodes[list].kind == .array && document.nodes[list].needsDecoding {
                let items = waiting[list] ?? []
                guard let found = elementOffsets(of: items, paths: paths, inListAt: list, of: document) else {
                    return paths.map { _ in nil }
                }
                for (path, offset) in found { offsets[path] = offset }
            }
            return offsets
        }
    }

    /// Reads a deferred list once, element by element to its end, and follows each waiting path
    /// into its element (a path whose element is past the end keeps the list's own offset);
    /// `nil` when the list holds a syntax error.
    private static func elementOffsets(
        of items: [Waiting], paths: [String], inListAt list: Int, of document: JSONTape
    ) -> [(path: Int, offset: Int)]? {
        let items = items.sorted { $0.element < $1.element }
        var elements = JSONTape.DeferredElements(JSONRef(tape: document, index: list))
        let tape = JSONTape(bytes: document.bytes)
        return withExtendedLifetime(tape) {
            var found: [(path: Int, offset: Int)] = []
            var next = 0
            var position = 0
            do {
                while let element = try elements.next(on: tape) {
                    var walker = PathWalker(tape: tape)
                    while next < items.count, items[next].element == position {
                        let item = items[next]
                        let reach = walker.reach(steps(of: paths[item.path]), from: item.rest, at: element.index)
                        found.append((item.path, tape.nodes[reach.node].start))
                        next += 1
                    }
                    position += 1
                }
            } catch {
                return nil
            }
            return found
        }
    }

    /// The line of each byte offset, counted in one pass over the bytes up to the last offset.
    private static func lineNumbers(of offsets: [Int?], in bytes: UnsafeBufferPointer<UInt8>) -> [Int?] {
        let order = offsets.indices.compactMap { index in offsets[index].map { (index, $0) } }.sorted { $0.1 < $1.1 }
        var lines = [Int?](repeating: nil, count: offsets.count)
        var line = 1
        var position = 0
        for (index, offset) in order {
            while position < offset {
                if bytes[position] == UInt8(ascii: "\n") { line += 1 }
                position += 1
            }
            lines[index] = line
        }
        return lines
    }
}

/// Follows paths down one tape. The members and elements of each container it steps into are
/// indexed the first time, so that many paths into one large object or array cost one pass over
/// it rather than one per path.
private struct PathWalker {
    /// How far a path got: the deepest node it reached, and how many of its bytes are left.
    struct Reach {
        var node: Int
        var left: Int
        /// When `node` is a deferred list and the path goes on into its element with this index.
        var deferredElement: Int?
    }

    private struct Step: Hashable {
        var node: Int
        var offset: Int
    }

    let tape: JSONTape
    private var members: [Int: [String: Int]] = [:]
    private var elements: [Int: [Int]] = [:]
    /// Where each (node, path offset) led, for the path being followed: a path can be cut into
    /// names in several ways, and without this a crafted one could try exponentially many.
    private var reached: [Step: Reach] = [:]

    init(tape: JSONTape) {
        self.tape = tape
    }

    /// How far `steps[offset...]` (empty, or starting with `.name` or `[n]`) reaches below `node`.
    mutating func reach(_ steps: [UInt8], from offset: Int, at node: Int) -> Reach {
        reached.removeAll(keepingCapacity: true)
        return follow(steps, from: offset, at: node)
    }

    private mutating func follow(_ steps: [UInt8], from offset: Int, at node: Int) -> Reach {
        if offset == steps.count { return Reach(node: node, left: 0) }
        if let known = reached[Step(node: node, offset: offset)] { return known }
        var best = Reach(node: node, left: steps.count - offset)
        let value = tape.nodes[node]
        switch steps[offset] {
        case UInt8(ascii: "[") where value.kind == .array:
            guard let (index, end) = Self.index(in: steps, at: offset) else { break }
            if value.needsDecoding {
                best = Reach(node: node, left: steps.count - end, deferredElement: index)
            } else if index < Int(value.count) {
                best = follow(steps, from: end, at: elementNodes(of: node)[index])
            }
        case UInt8(ascii: ".") where value.kind == .object:
            // Each cut of the rest before a `.`, a `[` or the end is a name the object may have.
            let start = offset + 1
            for end in start...steps.count
            where end == steps.count || steps[end] == UInt8(ascii: ".") || steps[end] == UInt8(ascii: "[") {
                let name = String(decoding: steps[start..<end], as: UTF8.self)
                guard let member = memberNodes(of: node)[name] else { continue }
                let candidate = follow(steps, from: end, at: member)
                if candidate.left < best.left { best = candidate }
            }
        default:
            break
        }
        reached[Step(node: node, offset: offset)] = best
        return best
    }

    /// The index in `[n]` at `offset` and the offset after its `]`.
    private static func index(in steps: [UInt8], at offset: Int) -> (Int, end: Int)? {
        var position = offset + 1
        var index = 0
        while position < steps.count, steps[position] &- UInt8(ascii: "0") < 10, position - offset <= 18 {
            index = index * 10 + Int(steps[position] &- UInt8(ascii: "0"))
            position += 1
        }
        guard position > offset + 1, position < steps.count, steps[position] == UInt8(ascii: "]") else { return nil }
        return (index, position + 1)
    }

    private mutating func elementNodes(of node: Int) -> [Int] {
        if let known = elements[node] { return known }
        let found = JSONRef(tape: tape, index: node).elements.map { $0.map(\.index) } ?? []
        elements[node] = found
        return found
    }

    private mutating func memberNodes(of node: Int) -> [String: Int] {
        if let known = members[node] { return known }
        var found: [String: Int] = [:]
        if let list = JSONRef(tape: tape, index: node).members {
            for (name, value) in list { found[name.text] = value.index }
        }
        members[node] = found
        return found
    }
}
