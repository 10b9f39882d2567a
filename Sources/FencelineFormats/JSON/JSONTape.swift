import Fenceline

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A JSON document parsed into one flat array of nodes in document order (a "tape"), for the
/// catalog decoders.
///
/// A tree of `JSONValue`s costs an allocation per array and object: a 100k-fence catalog made
/// millions of them, and most of its load time and peak memory went there. On the tape a
/// container is one node followed by its children, strings and number texts stay in the input
/// bytes until asked for, and the tape is reused from one request to the next. The bytes must
/// outlive the tape and every ``JSONRef`` into it.
final class JSONTape {
    enum Kind: UInt8 {
        case null, `false`, `true`, number, string, array, object
    }

    struct Node {
        var kind: Kind
        /// A string that has escapes or non-ASCII bytes, so it must be decoded (not just copied);
        /// an array whose elements are not on the tape (see ``DeferredElements``).
        var needsDecoding = false
        /// Elements of an array, members of an object.
        var count: UInt32 = 0
        /// Byte offset of the value's first byte (a string's opening quote).
        var start: Int
        /// Containers: the index of the node after the subtree. Strings and numbers: the byte
        /// offset just past the value.
        var end: Int
        /// A number's value; a string that needs no decoding: its first eight bytes
        /// (``prefix(of:)``), which tell most member names apart in one comparison; an object: one
        /// bit set for each member name (``nameBit(prefix:length:)``), all when a name needs
        /// decoding (escapes or bytes that are not plain ASCII).
        var bits: UInt64 = 0

        /// A name's bit in its object's `bits`: a lookup whose bit is clear there is answered
        /// without reading the members, and decoders mostly ask for members that are absent.
        @inline(__always)
        static func nameBit(prefix: UInt64, length: Int) -> UInt64 {
            1 << (((prefix ^ UInt64(truncatingIfNeeded: length)) &* 0x9E37_79B9_7F4A_7C15) >> 58)
        }

        var number: Double { Double(bitPattern: bits) }

        /// The first eight bytes of `text` in one word (zero past its end), little-endian.
        @inline(__always)
        static func prefix(of text: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var word: UInt64 = 0
            for offset in 0..<min(8, text.count) { word |= UInt64(text[offset]) << (8 * offset) }
            return word
        }
    }

    /// The tape's nodes on storage it owns: a read through an array property would retain the
    /// array's buffer, and the decoders read nodes millions of times while loading a catalog.
    struct Nodes {
        fileprivate var base: UnsafeMutablePointer<Node>
        private(set) var count = 0
        fileprivate var capacity: Int

        fileprivate init(capacity: Int) {
            self.capacity = capacity
            base = .allocate(capacity: capacity)
        }

        fileprivate(set) subscript(index: Int) -> Node {
            @inline(__always) get {
                precondition(index >= 0 && index < count, "node index out of range")
                return base[index]
            }
            @inline(__always) nonmutating set {
                precondition(index >= 0 && index < count, "node index out of range")
                base[index] = newValue
            }
        }

        @inline(__always)
        fileprivate mutating func append(_ node: Node) {
            if count == capacity { grow() }
            (base + count).initialize(to: node)
            count += 1
        }

        private mutating func grow() {
            let larger = UnsafeMutablePointer<Node>.allocate(capacity: capacity * 2)
            larger.moveInitialize(from: base, count: count)
            base.deallocate()
            base = larger
            capacity *= 2
        }

        fileprivate mutating func removeAll() { count = 0 }

        func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<Node>) -> Result) -> Result {
            body(UnsafeBufferPointer(start: base, count: count))
        }
    }

    private(set) var bytes: UnsafeBufferPointer<UInt8>
    // Unchecked: the tape is used by one thread, and dynamic exclusivity checks on every node
    // append and read cost more than the parse itself.
    @exclusivity(unchecked) private(set) var nodes = Nodes(capacity: 64)
    private var deferred: Set<String> = []
    /// How many objects and arrays each deferred list holds (by its node's index), counted while
    /// its brackets are matched: what a decoder reserves for its elements.
    private(set) var deferredContainers: [Int: Int] = [:]

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    deinit { nodes.base.deallocate() }  // Node is a plain value: nothing to deinitialize

    /// The first value parsed.
    var root: JSONRef { JSONRef(tape: self, index: 0) }

    /// Parses a whole document (a UTF-8 byte-order mark is tolerated) into a new tape.
    ///
    /// An array that is the value of a top-level member named in `deferred` is only matched for
    /// brackets: it gets one node without elements, read later with ``DeferredElements``.
    static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, deferringListsNamed deferred: Set<String> = []
    ) throws(JSONSyntaxError) -> JSONTape {
        let tape = JSONTape(bytes: bytes)
        tape.deferred = deferred
        defer { tape.deferred = [] }
        var scanner = JSONScanner(bytes: bytes)
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { scanner.position = 3 }
        try tape.parseValue(&scanner, depth: 0)
        scanner.skipWhitespace()
        guard scanner.isAtEnd else { throw scanner.error("unexpected \(scanner.describeNext()) after the JSON value") }
        return tape
    }

    /// Forgets every node and parses one value at the scanner's position (after whitespace).
    func reset(parsing scanner: inout JSONScanner) throws(JSONSyntaxError) -> JSONRef {
        nodes.removeAll()
        bytes = scanner.bytes
        try parseValue(&scanner, depth: 0)
        return root
    }

    private func parseValue(_ scanner: inout JSONScanner, depth: Int) throws(JSONSyntaxError) {
        scanner.skipWhitespace()
        guard let byte = scanner.peek() else { throw scanner.error("expected a value, found end of input") }
        let start = scanner.position
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < JSONScanner.maximumDepth else {
                throw scanner.error("nesting deeper than \(JSONScanner.maximumDepth) levels")
            }
            scanner.position += 1
            let index = nodes.count
            nodes.append(Node(kind: .object, start: start, end: 0))
            var count: UInt32 = 0
            var names: UInt64 = 0
            scanner.skipWhitespace()
            if scanner.peek() == UInt8(ascii: "}") {
                scanner.position += 1
            } else {
                while true {
                    scanner.skipWhitespace()
                    guard scanner.peek() == UInt8(ascii: "\"") else {
                        throw scanner.error("expected a member name in quotes, found \(scanner.describeNext())")
                    }
                    let keyIndex = nodes.count
                    try parseString(&scanner)
                    let name = nodes[keyIndex]
                    names |=
                        name.needsDecoding
                        ? ~0 : Node.nameBit(prefix: name.bits, length: name.end - name.start - 2)
                    let key = JSONRef(tape: self, index: keyIndex)
                    try scanner.expect(UInt8(ascii: ":"), "':' after member name \"\(key.text)\"")
                    scanner.skipWhitespace()
                    if depth == 0, !deferred.isEmpty, scanner.peek() == UInt8(ascii: "["), deferred.contains(key.text) {
                        let listStart = scanner.position
                        let containers = try skipList(&scanner)
                        deferredContainers[nodes.count] = containers
                        nodes.append(Node(kind: .array, needsDecoding: true, start: listStart, end: nodes.count + 1))
                    } else {
                        try parseValue(&scanner, depth: depth + 1)
                    }
                    count += 1
                    scanner.skipWhitespace()
                    if scanner.peek() == UInt8(ascii: ",") {
                        scanner.position += 1
                        continue
                    }
                    try scanner.expect(UInt8(ascii: "}"), "',' or '}' in object")
                    break
                }
            }
            nodes[index].count = count
            nodes[index].end = nodes.count
            nodes[index].bits = names
            if count > 1, let name = duplicateName(inObjectAt: index) {
                throw scanner.error("member \"\(name)\" appears twice in one object; give each member once")
            }
        case UInt8(ascii: "["):
            guard depth < JSONScanner.maximumDepth else {
                throw scanner.error("nesting deeper than \(JSONScanner.maximumDepth) levels")
            }
            scanner.position += 1
            let index = nodes.count
            nodes.append(Node(kind: .array, start: start, end: 0))
            var count: UInt32 = 0
            scanner.skipWhitespace()
            if scanner.peek() == UInt8(ascii: "]") {
                scanner.position += 1
            } else {
                while true {
                    try parseValue(&scanner, depth: depth + 1)
                    count += 1
                    scanner.skipWhitespace()
                    if scanner.peek() == UInt8(ascii: ",") {
                        scanner.position += 1
                        continue
                    }
                    try scanner.expect(UInt8(ascii: "]"), "',' or ']' in array")
                    break
                }
            }
            nodes[index].count = count
            nodes[index].end = nodes.count
        case UInt8(ascii: "\""):
            try parseString(&scanner)
        case UInt8(ascii: "t"):
            try scanner.literal("true")
            nodes.append(Node(kind: .true, start: start, end: scanner.position))
        case UInt8(ascii: "f"):
            try scanner.literal("false")
            nodes.append(Node(kind: .false, start: start, end: scanner.position))
        case UInt8(ascii: "n"):
            try scanner.literal("null")
            nodes.append(Node(kind: .null, start: start, end: scanner.position))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let value = try scanner.parseNumber()
            nodes.append(Node(kind: .number, start: start, end: scanner.position, bits: value.bitPattern))
        default:
            throw scanner.error("expected a value, found \(scanner.describeNext())")
        }
    }

    /// A member name given twice in the object whose node is at `index`, if one is: JSON leaves
    /// the meaning of `{"radius":5,"radius":500}` open, so it is refused rather than guessed.
    private func duplicateName(inObjectAt index: Int) -> String? {
        let count = Int(nodes[index].count)
        func text(_ position: Int) -> String { JSONRef(tape: self, index: position).text }
        func nameAfter(_ name: Int) -> Int { JSONRef.after(nodes[name + 1], at: name + 1) }
        if count > 16 {
            var seen = Set<String>()
            var name = index + 1
            for _ in 0..<count {
                if !seen.insert(text(name)).inserted { return text(name) }
                name = nameAfter(name)
            }
            return nil
        }
        // Small objects (every object of a fence catalog) are compared pairwise in place, with no
        // list of their names' positions to allocate per object.
        var first = index + 1
        for offset in 0..<count {
            var second = nameAfter(first)
            for _ in (offset + 1)..<count {
                if sameName(first, second) { return text(second) }
                second = nameAfter(second)
            }
            first = nameAfter(first)
        }
        return nil
    }

    /// Whether two member-name nodes are the same name: on raw bytes, unless either has escapes.
    private func sameName(_ first: Int, _ second: Int) -> Bool {
        let (a, b) = (nodes[first], nodes[second])
        if a.needsDecoding || b.needsDecoding {
            return JSONRef(tape: self, index: first).text == JSONRef(tape: self, index: second).text
        }
        let length = a.end - a.start
        // `length` counts the quotes: up to ten bytes, the prefixes hold the whole names.
        return length == b.end - b.start && a.bits == b.bits
            && (length <= 10 || memcmp(bytes.baseAddress! + a.start, bytes.baseAddress! + b.start, length) == 0)
    }

    /// Skips an array by matching brackets (strings respected) without checking what is between;
    /// its elements are checked when read. A mismatch is reported by a strict parse of the list,
    /// so the message is the one a full parse gives.
    /// Returns how many of its elements are objects or arrays.
    private func skipList(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> Int {
        let start = scanner.position
        let bytes = scanner.bytes
        var closers: [UInt8] = []
        var containers = 0
        var position = start
        scan: while true {
            position = Self.firstStructuralByte(in: bytes, from: position)
            guard position < bytes.count else { break }
            switch bytes[position] {
            case UInt8(ascii: "\""):
                position += 1
                while true {
                    position = Self.firstQuoteOrBackslash(in: bytes, from: position)
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\\") else { break }
                    position += 2
                }
            case UInt8(ascii: "["): closers.append(UInt8(ascii: "]"))
            case UInt8(ascii: "{"): closers.append(UInt8(ascii: "}"))
            case let byte:  // a closing bracket
                guard closers.last == byte else { break scan }
                closers.removeLast()
                if closers.count == 1 { containers += 1 }
                if closers.isEmpty {
                    scanner.position = position + 1
                    return containers
                }
            }
            position += 1
        }
        let strict = JSONTape(bytes: bytes)
        var again = JSONScanner(bytes: bytes, position: start)
        try strict.parseValue(&again, depth: 1)
        throw scanner.error("unbalanced brackets in the list", at: start)
    }

    /// The position of the first quote or bracket at or after `position` (`bytes.count` if none).
    /// `| 0x20` makes `[` and `]` read as `{` and `}`.
    @inline(__always)
    static func firstStructuralByte(in bytes: UnsafeBufferPointer<UInt8>, from position: Int) -> Int {
        firstMatch(in: bytes, from: position) { word in
            let folded = word | 0x2020_2020_2020_2020
            return zeroBytes(word ^ 0x2222_2222_2222_2222) | zeroBytes(folded ^ 0x7B7B_7B7B_7B7B_7B7B)
                | zeroBytes(folded ^ 0x7D7D_7D7D_7D7D_7D7D)
        } matches: { byte in
            byte == UInt8(ascii: "\"") || byte | 0x20 == UInt8(ascii: "{") || byte | 0x20 == UInt8(ascii: "}")
        }
    }

    /// The position of the first `"` or `\` at or after `position` (`bytes.count` if none).
    @inline(__always)
    static func firstQuoteOrBackslash(in bytes: UnsafeBufferPointer<UInt8>, from position: Int) -> Int {
        firstMatch(in: bytes, from: position) { word in
            zeroBytes(word ^ 0x2222_2222_2222_2222) | zeroBytes(word ^ 0x5C5C_5C5C_5C5C_5C5C)
        } matches: { byte in
            byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
        }
    }

    /// The position of the first byte at or after `position` that `matches` (`bytes.count` if
    /// none), eight bytes at a time while eight remain: most bytes of a list of fences are digits,
    /// commas and spaces. `flags` marks a word's matching bytes by their high bits (a zero byte of
    /// `word ^ pattern` is a match; the lowest flagged byte is exact, as a borrow only flags bytes
    /// above a true match).
    @inline(__always)
    private static func firstMatch(
        in bytes: UnsafeBufferPointer<UInt8>, from position: Int, flags: (UInt64) -> UInt64,
        matches: (UInt8) -> Bool
    ) -> Int {
        var position = position
        #if _endian(little)
            while position + 8 <= bytes.count {
                let found = flags(UnsafeRawPointer(bytes.baseAddress! + position).loadUnaligned(as: UInt64.self))
                if found != 0 { return position + found.trailingZeroBitCount >> 3 }
                position += 8
            }
        #endif
        while position < bytes.count, !matches(bytes[position]) { position += 1 }
        return position
    }

    /// The high bit of each zero byte of `word` set (and maybe of bytes above the lowest zero).
    @inline(__always)
    private static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
    }

    /// A string node; escapes and non-ASCII text are checked now (so errors carry their offset)
    /// and decoded again only when the text is asked for.
    private func parseString(_ scanner: inout JSONScanner) throws(JSONSyntaxError) {
        let start = scanner.position
        var position = start + 1
        let bytes = scanner.bytes
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                scanner.position = position + 1
                let text = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<position])
                nodes.append(Node(kind: .string, start: start, end: scanner.position, bits: Node.prefix(of: text)))
                return
            }
            if byte == UInt8(ascii: "\\") || byte >= 0x80 || byte < 0x20 { break }
            position += 1
        }
        _ = try scanner.parseString()  // the slow path checks (and reports) everything
        nodes.append(Node(kind: .string, needsDecoding: true, start: start, end: scanner.position))
    }
}

@available(*, unavailable)
extension JSONTape: Sendable {}

extension JSONTape {
    /// Reads the elements of a list deferred by ``JSONTape/parse(_:deferringListsNamed:)`` one at a
    /// time, each parsed (and checked) onto a reused tape; a list that is on its tape is read from it.
    struct DeferredElements {
        private let list: JSONRef
        private var scanner: JSONScanner
        private var started = false
        private var finished = false
        private var inTape: JSONRef.Elements.Iterator?

        init(_ list: JSONRef) {
            self.list = list
            scanner = JSONScanner(bytes: list.tape.bytes, position: list.node.start + 1)
            if !list.node.needsDecoding { inTape = list.elements?.makeIterator() }
        }

        /// The next element, parsed onto `tape` (replacing what it held), or `nil` after the last.
        mutating func next(on tape: JSONTape) throws(JSONSyntaxError) -> JSONRef? {
            if inTape != nil { return inTape!.next() }
            guard !finished else { return nil }
            scanner.skipWhitespace()
            if !started {
                started = true
                if scanner.peek() == UInt8(ascii: "]") {
                    finished = true
                    return nil
                }
            } else if scanner.peek() == UInt8(ascii: ",") {
                scanner.position += 1
            } else {
                try scanner.expect(UInt8(ascii: "]"), "',' or ']' in array")
                finished = true
                return nil
            }
            return try tape.reset(parsing: &scanner)
        }
    }
}
