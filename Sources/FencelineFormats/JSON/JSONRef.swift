import Fenceline

/// One value on a ``JSONTape``. It does not keep the tape alive (no reference counting on the
/// hot path): whoever parses keeps the tape, and refs never outlive the decoding call.
struct JSONRef {
    unowned(unsafe) let tape: JSONTape
    private(set) var index: Int

    init(tape: JSONTape, index: Int) {
        self.tape = tape
        self.index = index
    }

    /// Another value on the same tape. A copy with a new index: making a ref from `tape` goes
    /// through a strong reference (a retain and a release), per member found and element read.
    @inline(__always)
    func sibling(at index: Int) -> JSONRef {
        var ref = self
        ref.index = index
        return ref
    }

    var node: JSONTape.Node { tape.nodes[index] }
    var kind: JSONTape.Kind { node.kind }
    var isNull: Bool { kind == .null }

    /// How the value's kind reads in a message.
    var kindName: String {
        switch kind {
        case .null: "null"
        case .false, .true: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// For a list deferred by ``JSONTape/parse(_:deferringListsNamed:)``, how many of its
    /// elements are objects or arrays; `nil` for any other value.
    var deferredContainers: Int? { tape.deferredContainers[index] }

    /// The index of the node after this value's subtree.
    var next: Int { Self.after(node, at: index) }

    /// The index of the node after the value `node` (at `position`) and its subtree.
    @inline(__always)
    static func after(_ node: JSONTape.Node, at position: Int) -> Int {
        node.kind == .array || node.kind == .object ? node.end : position + 1
    }

    /// Whether a member name that needs no decoding (`name`, a string node of this tape) is
    /// `key`, whose ``JSONTape/Node/prefix(of:)`` is `prefix`: the lengths and prefixes settle
    /// names of up to eight bytes; longer ones compare the rest.
    @inline(__always)
    private func rawName(_ name: JSONTape.Node, is key: UnsafeBufferPointer<UInt8>, prefix: UInt64) -> Bool {
        let length = name.end - name.start - 2
        guard length == key.count, name.bits == prefix else { return false }
        // Byte by byte: names are a few bytes, shorter than a call to memcmp takes to set up.
        let text = tape.bytes.baseAddress! + name.start + 1
        var offset = 8
        while offset < length {
            if text[offset] != key[offset] { return false }
            offset += 1
        }
        return true
    }

    var number: Double? { kind == .number ? node.number : nil }

    var bool: Bool? {
        switch kind {
        case .true: true
        case .false: false
        default: nil
        }
    }

    /// The string's text, or `nil` for other kinds.
    var string: String? { kind == .string ? text : nil }

    /// A string's decoded text (the caller knows it is a string).
    var text: String {
        let node = node
        if !node.needsDecoding {
            return String(
                decoding: UnsafeBufferPointer(rebasing: tape.bytes[(node.start + 1)..<(node.end - 1)]), as: UTF8.self)
        }
        var scanner = JSONScanner(bytes: tape.bytes, position: node.start)
        return (try? scanner.parseString()) ?? ""
    }

    /// A number's literal text.
    var numberText: String? {
        guard kind == .number else { return nil }
        let node = node
        return String(decoding: UnsafeBufferPointer(rebasing: tape.bytes[node.start..<node.end]), as: UTF8.self)
    }

    /// An array's elements in order, `nil` for other kinds.
    var elements: Elements? {
        let node = node
        guard node.kind == .array else { return nil }
        return Elements(array: self, first: index + 1, count: Int(node.count))
    }

    /// An object's members in order, `nil` for other kinds.
    var members: Members? {
        let node = node
        guard node.kind == .object else { return nil }
        return Members(object: self, first: index + 1, count: Int(node.count))
    }

    /// The value of the member named `key` of an object (a parse refuses an object that names a
    /// member twice, so there is at most one).
    ///
    /// One pass over the object's nodes in place, names compared on raw bytes: decoders ask for
    /// each known member by name, and the sequence-based walk retained the tape's storage per step.
    subscript(member key: String) -> JSONRef? {
        var key = key
        return key.withUTF8 { key in
            tape.nodes.withUnsafeBufferPointer { nodes in
                let object = nodes[index]
                guard object.kind == .object else { return nil }
                let prefix = JSONTape.Node.prefix(of: key)
                guard object.bits & JSONTape.Node.nameBit(prefix: prefix, length: key.count) != 0 else { return nil }
                var position = index + 1
                for _ in 0..<object.count {
                    let name = nodes[position]
                    let matches =
                        name.needsDecoding
                        ? sibling(at: position).text.utf8.elementsEqual(key)
                        : rawName(name, is: key, prefix: prefix)
                    if matches { return sibling(at: position + 1) }
                    position = JSONRef.after(nodes[position + 1], at: position + 1)
                }
                return nil
            }
        }
    }

    /// The names of an object's members that are not among `known`, in order (usually none).
    ///
    /// Names are compared on raw bytes (a name that needs decoding is decoded first) rather than
    /// as strings made and hashed per member; a name whose filter bit `known` lacks is unknown
    /// without comparing it to any.
    func memberNames(notIn known: KnownNames) -> [String] {
        tape.nodes.withUnsafeBufferPointer { nodes in
            let object = nodes[index]
            guard object.kind == .object else { return [] }
            var unknown: [String] = []
            var position = index + 1
            for _ in 0..<object.count {
                let name = nodes[position]
                if name.needsDecoding {
                    let text = sibling(at: position).text
                    if !known.names.contains(text) { unknown.append(text) }
                } else {
                    let length = name.end - name.start - 2
                    let isKnown =
                        known.filter & JSONTape.Node.nameBit(prefix: name.bits, length: length) != 0
                        && known.keys.indices.contains { place in
                            let key = known.keys[place]
                            guard key.length == length, key.prefix == name.bits else { return false }
                            var text = known.names[place]
                            return length <= 8 || text.withUTF8 { rawName(name, is: $0, prefix: key.prefix) }
                        }
                    if !isKnown { unknown.append(sibling(at: position).text) }
                }
                position = JSONRef.after(nodes[position + 1], at: position + 1)
            }
            return unknown
        }
    }

    /// The value as a `JSONValue` tree (for data carried through untouched, such as `userInfo`).
    var value: JSONValue {
        switch kind {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .number: return .number(JSONNumber(text: numberText ?? "", value: node.number))
        case .string: return .string(text)
        case .array: return .array(elements.map { $0.map(\.value) } ?? [])
        case .object: return .object(objectValue)
        }
    }

    /// An object as a `JSONObject`, members in order.
    var objectValue: JSONObject {
        JSONObject(members.map { $0.map { (key: $0.name.text, value: $0.value.value) } } ?? [])
    }

    struct Elements: Sequence {
        /// The array (an iterator's refs are copies of it with their own index).
        let array: JSONRef
        let first: Int
        let count: Int

        struct Iterator: IteratorProtocol {
            var element: JSONRef
            var remaining: Int

            mutating func next() -> JSONRef? {
                guard remaining > 0 else { return nil }
                remaining -= 1
                let current = element
                element = current.sibling(at: current.next)
                return current
            }
        }

        func makeIterator() -> Iterator { Iterator(element: array.sibling(at: first), remaining: count) }
        var underestimatedCount: Int { count }
    }

    struct Members: Sequence {
        /// The object (an iterator's refs are copies of it with their own index).
        let object: JSONRef
        let first: Int
        let count: Int

        struct Iterator: IteratorProtocol {
            var name: JSONRef
            var remaining: Int

            mutating func next() -> (name: JSONRef, value: JSONRef)? {
                guard remaining > 0 else { return nil }
                remaining -= 1
                let current = name
                let value = current.sibling(at: current.index + 1)
                name = current.sibling(at: value.next)
                return (current, value)
            }
        }

        func makeIterator() -> Iterator { Iterator(name: object.sibling(at: first), remaining: count) }
        var underestimatedCount: Int { count }

        /// The member names in order.
        var names: [String] { map { $0.name.text } }
    }
}

/// The member names an object may have (a decoder's list for one kind of object), each with its
/// length, first eight bytes and filter bit worked out once: a catalog's decoder checks every
/// object of a kind against the same list.
struct KnownNames: ExpressibleByArrayLiteral {
    let names: [String]
    fileprivate let keys: [(prefix: UInt64, length: Int)]
    /// The names' bits (``JSONTape/Node/nameBit(prefix:length:)``).
    fileprivate let filter: UInt64

    init(_ names: [String]) {
        self.names = names
        keys = names.map { name in
            var name = name
            return name.withUTF8 { (JSONTape.Node.prefix(of: $0), $0.count) }
        }
        filter = keys.reduce(0) { $0 | JSONTape.Node.nameBit(prefix: $1.prefix, length: $1.length) }
    }

    init(arrayLiteral names: String...) {
        self.init(names)
    }

    /// These names and `more`.
    static func + (known: KnownNames, more: [String]) -> KnownNames { KnownNames(known.names + more) }
}
