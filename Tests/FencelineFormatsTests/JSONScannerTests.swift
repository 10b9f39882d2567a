import Fenceline
import TestSupport
import Testing

@testable import FencelineFormats

@Suite struct JSONScannerTests {
    func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBufferPointer { buffer throws(JSONSyntaxError) in
            try JSONValue.parse(UnsafeBufferPointer(buffer))
        }
    }

    @Test func objectsKeepMemberOrderAndNumberText() throws {
        let value = try parse(#"{"z": 1.50, "a": [true, null, "x\n\u00e9\ud83d\ude00"], "m": {"k": -2e3}}"#)
        guard case .object(let object) = value else { Issue.record("not an object"); return }
        #expect(object.keys == ["z", "a", "m"])
        #expect(object["z"] == .number(JSONNumber(text: "1.50", value: 1.5)))
        #expect(object["a"] == .array([.bool(true), .null, .string("x\né😀")]))
        guard case .object(let inner)? = object["m"], case .number(let number)? = inner["k"] else {
            Issue.record("no m.k"); return
        }
        #expect(number.value == -2000)
    }

    /// A string is plain up to its first quote, backslash, control byte or byte that is not
    /// ASCII: with each of those at every offset, the tape's text is the string's, and a raw
    /// control byte or a missing closing quote is an error wherever it falls.
    @Test func stringsWithSpecialBytesAtEveryOffsetReadAsTheirText() throws {
        let specials: [(written: String, text: String)] = [
            (#"\""#, "\""), (#"\\"#, "\\"), (#"\n"#, "\n"), (#"\u0001"#, "\u{1}"), ("é", "é"), ("\u{7F}", "\u{7F}"),
            ("", ""),
        ]
        for offset in 0..<20 {
            for special in specials {
                let head = String(repeating: "a", count: offset)
                let text = #"{"k": ""# + head + special.written + "bc" + #"", "after": 1}"#
                var bytes = Array(text.utf8)
                try bytes.withUnsafeMutableBufferPointer { buffer throws(JSONSyntaxError) in
                    let tape = try JSONTape.parse(UnsafeBufferPointer(buffer))
                    defer { withExtendedLifetime(tape) {} }
                    #expect(tape.root[member: "k"]?.string == head + special.text + "bc", "\(text)")
                    #expect(tape.root[member: "after"]?.number == 1, "\(text)")
                }
            }
            // A raw control byte or an unterminated string is an error wherever it falls.
            for broken in [
                #"{"k": ""# + String(repeating: "a", count: offset) + "\u{1}\"}",
                #"{"k": ""# + String(repeating: "a", count: offset),
            ] {
                var bytes = Array(broken.utf8)
                bytes.withUnsafeMutableBufferPointer { buffer in
                    #expect(throws: JSONSyntaxError.self, "\(broken)") {
                        try JSONTape.parse(UnsafeBufferPointer(buffer))
                    }
                }
            }
        }
    }

    /// Names are told apart by length and first eight bytes, then by the rest: names that share
    /// their first eight bytes, or all but the last, are different members, and a repeat of a long
    /// name is refused as one of a short name is.
    @Test func tapeMembersSharingAPrefixAreDifferentMembers() throws {
        let text =
            #"{"notifyOnEntry": 1, "notifyOnExit": 2, "notifyOn": 3, "notifyOnEntrx": 4, "n\u006ftifyOnExit2": 5}"#
        var bytes = Array(text.utf8)
        try bytes.withUnsafeMutableBufferPointer { buffer throws(JSONSyntaxError) in
            let tape = try JSONTape.parse(UnsafeBufferPointer(buffer))
            defer { withExtendedLifetime(tape) {} }
            let root = tape.root
            #expect(root[member: "notifyOnEntry"]?.number == 1)
            #expect(root[member: "notifyOnExit"]?.number == 2)
            #expect(root[member: "notifyOn"]?.number == 3)
            #expect(root[member: "notifyOnEntrx"]?.number == 4)
            #expect(root[member: "notifyOnExit2"]?.number == 5)
            #expect(root[member: "notifyO"] == nil && root[member: "notifyOnEntryy"] == nil)
            #expect(
                root.memberNames(notIn: ["notifyOnEntry", "notifyOn", "notifyOnExit2"]) == [
                    "notifyOnExit", "notifyOnEntrx",
                ])
        }
        for repeated in [
            #"{"notifyOnEntry": 1, "notifyOnEntry": 2}"#, #"{"notifyOnEntry": 1, "notifyOn\u0045ntry": 2}"#,
        ] {
            var bytes = Array(repeated.utf8)
            bytes.withUnsafeMutableBufferPointer { buffer in
                #expect(throws: JSONSyntaxError.self, "\(repeated)") { try JSONTape.parse(UnsafeBufferPointer(buffer)) }
            }
        }
    }

    /// An object keeps a bit per member name to answer lookups of absent names at once, and a
    /// list of known names their bits: on random objects, every member is found by its name
    /// (escaped or not), names it lacks (many sharing a bit with one it has) are not, and the
    /// members not among a known list are exactly those.
    @Test func lookupsOfRandomNamesFindExactlyTheMembers() throws {
        var random = SplitMix(state: 64)
        // Half the objects have only plain names: a name that needs decoding (here "é") sets
        // every bit of its object's filter, which would hide a wrong bit.
        var letters = Array("abcdefghijklmnopqrstuvwxyz_0")
        func name() -> String {
            String((0..<Int.random(in: 0...14, using: &random)).map { _ in letters.randomElement(using: &random)! })
        }
        for round in 0..<500 {
            if round == 250 { letters.append("é") }
            var names: [String] = []
            while names.count < Int.random(in: 1...12, using: &random) {
                let candidate = name()
                if !names.contains(candidate) { names.append(candidate) }
            }
            // Now and then a name written with an escape, which the lookup must still find.
            let members = names.enumerated().map { index, name in
                let written = index == 0 && Bool.random(using: &random) ? name.replacing("a", with: "\\u0061") : name
                return "\"\(written)\": \(index)"
            }
            var bytes = Array(("{" + members.joined(separator: ", ") + "}").utf8)
            try bytes.withUnsafeMutableBufferPointer { buffer throws(JSONSyntaxError) in
                let tape = try JSONTape.parse(UnsafeBufferPointer(buffer))
                defer { withExtendedLifetime(tape) {} }
                for (index, name) in names.enumerated() {
                    #expect(tape.root[member: name]?.number == Double(index), "\(name) in \(names)")
                }
                for _ in 0..<20 {
                    let absent = name()
                    if !names.contains(absent) { #expect(tape.root[member: absent] == nil, "\(absent) in \(names)") }
                }
                // And the members not among a known list are exactly those, in order.
                let known = names.filter { _ in Bool.random(using: &random) } + (0..<8).map { _ in name() }
                #expect(
                    tape.root.memberNames(notIn: KnownNames(known)) == names.filter { !known.contains($0) },
                    "\(names) known \(known)")
            }
        }
    }

    /// Decoders look members up by name on the tape: escaped names match their text, nested
    /// containers are stepped over, other kinds have no members.
    @Test func tapeMembersAreFoundByName() throws {
        let text = #"{"a": [1, {"b": 2}], "": 3, "c": {"a": 4}, "b": 5, "é": 6, "bb": 7}"#
        var bytes = Array(text.utf8)
        try bytes.withUnsafeMutableBufferPointer { buffer throws(JSONSyntaxError) in
            let tape = try JSONTape.parse(UnsafeBufferPointer(buffer))
            defer { withExtendedLifetime(tape) {} }
            let root = tape.root
            #expect(root[member: "a"]?.elements?.underestimatedCount == 2)
            #expect(root[member: ""]?.number == 3)
            #expect(root[member: "b"]?.number == 5)
            #expect(root[member: "é"]?.number == 6)
            #expect(root[member: "bb"]?.number == 7)
            #expect(root[member: "d"] == nil)
            #expect(root[member: "a"]?[member: "b"] == nil)
            #expect(root[member: "c"]?[member: "a"]?.number == 4)
            #expect(root[member: "b"]?[member: "a"] == nil)
        }
    }

    /// A deferred list is only matched for brackets at first (strings and escapes respected), the
    /// members after it are on the tape, and its elements are parsed one at a time when read.
    @Test func deferredListsAreSkippedThenReadElementByElement() throws {
        let text = #"{"requests": [{"id": "a]\"}"}, [1, [2]], "[{"], "after": true}"#
        var bytes = Array(text.utf8)
        try bytes.withUnsafeMutableBufferPointer { buffer throws(JSONSyntaxError) in
            let tape = try JSONTape.parse(UnsafeBufferPointer(buffer), deferringListsNamed: ["requests"])
            let reused = JSONTape(bytes: UnsafeBufferPointer(buffer))
            defer { withExtendedLifetime((tape, reused)) {} }
            #expect(tape.root[member: "after"]?.bool == true)
            var elements = JSONTape.DeferredElements(tape.root[member: "requests"]!)
            #expect(try elements.next(on: reused)?[member: "id"]?.string == #"a]"}"#)
            #expect(try elements.next(on: reused)?.elements?.underestimatedCount == 2)
            #expect(try elements.next(on: reused)?.string == "[{")
            #expect(try elements.next(on: reused) == nil)
        }
    }

    /// The bracket matching that skips a deferred list (eight bytes at a time) agrees with a full
    /// parse of the same list on random lists: brackets, quotes and backslashes inside strings at
    /// every alignment, non-ASCII text, nesting; and a list cut short or closed wrongly is an error
    /// either way.
    @Test func skippingADeferredListAgreesWithParsingIt() throws {
        var random = SplitMix(state: 28)
        let pieces = [#"\""#, #"\\"#, "[", "]", "{", "}", ",", "é", "ab", " ", "1", #"\u005d"#]
        func string() -> String {
            let count = Int.random(in: 0...12, using: &random)
            return "\"" + (0..<count).map { _ in pieces.randomElement(using: &random)! }.joined() + "\""
        }
        func value(depth: Int) -> String {
            switch Int.random(in: 0..<(depth > 3 ? 3 : 5), using: &random) {
            case 0: return string()
            case 1: return String(Double.random(in: -180...180, using: &random))
            case 2: return ["true", "null", "false"].randomElement(using: &random)!
            case 3:
                let count = Int.random(in: 0...4, using: &random)
                return "[" + (0..<count).map { _ in value(depth: depth + 1) }.joined(separator: ", ") + "]"
            default:
                let count = Int.random(in: 0...4, using: &random)
                return "{"
                    + (0..<count).map { "\"k\($0)" + string().dropFirst() + ": " + value(depth: depth + 1) }
                    .joined(separator: ",") + "}"
            }
        }
        for _ in 0..<2_000 {
            // Cut short or closed wrongly now and then: both parses must refuse it.
            let broken = Int.random(in: 0..<8, using: &random)
            let count = Int.random(in: 0...6, using: &random)
            let list =
                "[" + (0..<count).map { _ in value(depth: 1) }.joined(separator: ",") + (broken == 0 ? "}" : "]")
            let padding = String(repeating: " ", count: Int.random(in: 0...8, using: &random))
            var text = #"{"requests":"# + padding + list + #", "after": [1, "]"]}"#
            if broken == 1 { text = String(text.prefix(Int.random(in: 12..<(text.count - 1), using: &random))) }
            var bytes = Array(text.utf8)
            try bytes.withUnsafeMutableBufferPointer { buffer throws(JSONSyntaxError) in
                let input = UnsafeBufferPointer(buffer)
                let full: JSONTape
                do throws(JSONSyntaxError) {
                    full = try JSONTape.parse(input)
                } catch {
                    #expect(throws: JSONSyntaxError.self, "\(text)") {
                        try JSONTape.parse(input, deferringListsNamed: ["requests"])
                    }
                    return
                }
                let deferred = try JSONTape.parse(input, deferringListsNamed: ["requests"])
                defer { withExtendedLifetime((full, deferred)) {} }
                let elements = full.root[member: "requests"]!.elements!
                let containers = elements.filter { $0.kind == .array || $0.kind == .object }.count
                #expect(deferred.root[member: "requests"]?.deferredContainers == containers, "\(text)")
                #expect(deferred.root[member: "after"]?.elements?.underestimatedCount == 2, "\(text)")
                let reused = JSONTape(bytes: input)
                defer { withExtendedLifetime(reused) {} }
                var read = JSONTape.DeferredElements(deferred.root[member: "requests"]!)
                var kinds: [JSONTape.Kind] = []
                while let element = try read.next(on: reused) { kinds.append(element.kind) }
                #expect(kinds == elements.map(\.kind), "\(text)")
            }
        }
    }

    @Test(arguments: [
        (#"{"requests": [{"a": 1]}], "b": 2}"#, "expected ',' or '}' in object"),
        (#"{"requests": [[1, 2}, 3]}"#, "expected ',' or ']' in array"),
        (#"{"requests": [[1, 2], "#, "expected a value, found end of input"),
    ])
    func unbalancedDeferredListsAreReportedAsAFullParseWould(text: String, reason: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBufferPointer { buffer in
            do throws(JSONSyntaxError) {
                _ = try JSONTape.parse(UnsafeBufferPointer(buffer), deferringListsNamed: ["requests"])
                Issue.record("parsed \(text)")
            } catch {
                #expect(error.message.contains(reason), "\(error.message)")
            }
        }
    }

    @Test(arguments: [
        (#"{"a": 1"#, "expected ',' or '}'"),
        (#"{"a": "open}"#, "unterminated string"),
        (#"[1, 2] x"#, "after the JSON value"),
        (#"{"lat": NaN}"#, "NaN"),
        (#"{"a": 01}"#, "expected ',' or '}' in object, found a number"),
        (#"{"a": 1.}"#, "digit after the decimal point"),
        ("", "end of input"),
    ])
    func malformedInputIsAnErrorWithAReason(text: String, reason: String) {
        do {
            _ = try parse(text)
            Issue.record("parsed \(text)")
        } catch {
            #expect(error.message.contains(reason), "\(error.message)")
        }
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let text = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try parse(text) }
    }

    @Test func scannerNumbersAreCorrectlyRounded() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let integer = String(UInt64.random(in: 0...999_999_999, using: &generator))
            let fraction = String(UInt64.random(in: 0...999_999_999_999, using: &generator))
            let zeros = String(repeating: "0", count: Int.random(in: 0...3, using: &generator))
            for text in [
                "\(integer).\(zeros)\(fraction)", "-0.\(zeros)\(fraction)", integer, "\(integer)e-\(zeros.count + 1)",
            ] {
                guard case .number(let number) = try parse(text) else {
                    Issue.record("not a number: \(text)"); continue
                }
                #expect(number.value == Double(text)!, "\(text)")
            }
        }
    }

    @Test func numbersFollowedByMoreBytesAreCorrectlyRounded() throws {
        // Numbers inside documents, followed by more bytes: every length of fraction (with leading
        // zeros), with and without an exponent, followed by a comma, a brace or spaces.
        var generator = SplitMix(state: 17)
        for round in 0..<20_000 {
            let integer = String(UInt64.random(in: 0...999_999_999_999, using: &generator))
            let zeros = String(repeating: "0", count: Int.random(in: 0...9, using: &generator))
            let length = Int.random(in: 1...20, using: &generator)
            let fraction = String((0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
            let number = "\(round.isMultiple(of: 3) ? "-" : "")\(integer).\(zeros)\(fraction)"
            let exponent = round.isMultiple(of: 5) ? "e-3" : ""
            let text = [
                "[\(number)\(exponent),1,2,3,4,5]", "{\"a\":\(number)\(exponent)}        ",
                "[\(number)\(exponent)         ]",
            ][
                round % 3]
            guard case .array(let items) = try parse(#"[\#(text)]"#), let first = items.first else {
                Issue.record("not parsed: \(text)"); continue
            }
            let value: Double?
            switch first {
            case .array(let inner):
                if case .number(let parsed)? = inner.first { value = parsed.value } else { value = nil }
            case .object(let object):
                if case .number(let parsed)? = object["a"] { value = parsed.value } else { value = nil }
            default: value = nil
            }
            #expect(value == Double(number + exponent)!, "\(text)")
        }
    }

    @Test func fastNumberPathIsCorrectlyRounded() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...17, using: &generator)
            var text = Bool.random(using: &generator) ? "-" : ""
            let point = Int.random(in: 0...digits, using: &generator)
            for index in 0..<digits {
                if index == point && index > 0 { text += "." }
                text += String(Int.random(in: (index == 0 ? 1 : 0)...9, using: &generator))
            }
            let parsed = Array(text.utf8).withUnsafeBufferPointer { DecimalNumber.parse($0) }
            #expect(parsed == Double(text)!, "\(text)")
        }
    }
}
