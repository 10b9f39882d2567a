import Fenceline

/// Collects issues while decoding, each with the request it belongs to and its JSON path.
final class IssueSink {
    var issues: [CatalogIssue] = []
    var warnings: [CatalogIssue] = []
    var requestID: String?
    /// The list and index of the element being read, when paths given to the sink are relative to
    /// it (`trigger.radius` for `requests[7].trigger.radius`): the element's path is made only for
    /// a message, as a catalog's decoder reads a million elements and most show none.
    var element: (list: String, index: Int)?

    /// `path` from the catalog's top: after the element's own path when paths are relative to one.
    func absolute(_ path: String) -> String {
        guard let (list, index) = element else { return path }
        // Not `join` for the element itself: a member named "" is a path's last step too.
        let element = Self.path(ofElement: index, in: list)
        return path.isEmpty ? element : Self.join(element, path)
    }

    /// The path of element `index` of the list `list` (`requests[7]`).
    static func path(ofElement index: Int, in list: String) -> String { "\(list)[\(index)]" }

    func add(_ path: String, _ message: String) {
        issues.append(CatalogIssue(requestID: requestID, path: absolute(path), message: message))
    }

    func warn(_ path: String, _ message: String) {
        warnings.append(CatalogIssue(requestID: requestID, path: absolute(path), message: message))
    }

    /// Adds a validator's problem about the request at `request` unless one of `read` (the
    /// problems met reading it) is in the same member of the request: a value that could not be
    /// read is absent when the request is validated, so what the validator says of that member
    /// ("among must name a device" after "among[0]: expected a string") would be about a value
    /// that was never given.
    /// A Feature's member is the one under `properties`, and a trigger's members count apart (a
    /// hysteresis that cannot be read says nothing of the fence it goes with).
    func add(_ path: String, _ message: String, unlessAMemberOf request: String, wasUnread read: [CatalogIssue]) {
        let request = absolute(request)
        func member(_ path: Substring) -> Substring {
            guard path.hasPrefix(request) else { return path }
            var rest = path.dropFirst(request.count).drop { $0 == "." }
            if rest.hasPrefix("properties.") { rest = rest.dropFirst("properties.".count) }
            if rest.hasPrefix("trigger.") { rest = rest.dropFirst("trigger.".count) }
            return rest.prefix { $0 != "." && $0 != "[" }
        }
        let own = member(absolute(path)[...])
        if read.contains(where: { member($0.path[...]) == own }) { return }
        add(path, message)
    }

    /// `path`, then `member` below it.
    static func join(_ path: String, _ member: String) -> String { path.isEmpty ? member : "\(path).\(member)" }
}

/// Typed access to one JSON object's members, reporting wrong types at their paths.
struct FieldReader {
    /// The object, or `nil` for an absent one read as empty.
    let object: JSONRef?
    let sink: IssueSink
    /// The path of the object that holds this one, and this one's member name there (`nil` when
    /// `parentPath` is this object's own path): kept apart until a message needs the whole, as
    /// most objects read produce none.
    private let parentPath: String
    private let key: String?

    /// The object's path.
    var path: String { key.map { IssueSink.join(parentPath, $0) } ?? parentPath }

    init?(_ value: JSONRef?, path: String, sink: IssueSink, required: Bool = true) {
        self.init(value, parentPath: path, key: nil, sink: sink, required: required)
    }

    /// The object that is the member `key` of `parent` (`value`, that member's value).
    init?(_ value: JSONRef?, member key: String, of parent: FieldReader, required: Bool = true) {
        self.init(value, parentPath: parent.path, key: key, sink: parent.sink, required: required)
    }

    private init?(_ value: JSONRef?, parentPath: String, key: String?, sink: IssueSink, required: Bool) {
        self.object = value
        self.parentPath = parentPath
        self.key = key
        self.sink = sink
        guard let value else {
            if required { sink.add(path, "missing object") }
            return nil
        }
        guard value.kind == .object else {
            sink.add(path, "expected an object, found \(value.kindName)")
            return nil
        }
    }

    /// An absent object read as `{}`.
    init(emptyAt path: String, sink: IssueSink) {
        self.object = nil
        self.parentPath = path
        self.key = nil
        self.sink = sink
    }

    func at(_ key: String) -> String { IssueSink.join(path, key) }

    /// The value of the member named `key`, if present.
    subscript(key: String) -> JSONRef? { object?[member: key] }

    func has(_ key: String) -> Bool { self[key] != nil }

    /// Warns about members this object does not know (a likely typo).
    func warnUnknown(known: KnownNames) {
        guard let object else { return }
        for key in object.memberNames(notIn: known) { sink.warn(at(key), "unknown field \"\(key)\" is ignored") }
    }

    func string(_ key: String, required: Bool = false) -> String? {
        guard let value = self[key], !value.isNull else {
            if required { sink.add(at(key), "missing field \"\(key)\"") }
            return nil
        }
        guard let text = value.string else {
            sink.add(at(key), "expected a string, found \(value.kindName)")
            return nil
        }
        return text
    }

    func number(_ key: String, required: Bool = false) -> Double? {
        guard let value = self[key], !value.isNull else {
            if required { sink.add(at(key), "missing field \"\(key)\"") }
            return nil
        }
        guard let number = value.number else {
            sink.add(at(key), "expected a number, found \(value.kindName)")
            return nil
        }
        return number
    }

    func integer(_ key: String, required: Bool = false) -> Int? {
        guard let value = number(key, required: required) else { return nil }
        guard value.rounded() == value, abs(value) < 1e15 else {
            sink.add(at(key), "expected a whole number, found \(value)")
            return nil
        }
        return Int(value)
    }

    func seconds(_ key: String) -> TimeSpan? {
        guard let value = number(key) else { return nil }
        guard let span = TimeSpan(checkedSeconds: value) else {
            sink.add(at(key), "expected a number of seconds of at most \(Self.longestSeconds), found \(value)")
            return nil
        }
        return span
    }

    func bool(_ key: String) -> Bool? {
        guard let value = self[key], !value.isNull else { return nil }
        guard let flag = value.bool else {
            sink.add(at(key), "expected true or false, found \(value.kindName)")
            return nil
        }
        return flag
    }

    func strings(_ key: String) -> [String]? {
        guard let value = self[key], !value.isNull else { return nil }
        guard let items = value.elements else {
            sink.add(at(key), "expected an array of strings, found \(value.kindName)")
            return nil
        }
        var result: [String] = []
        for (index, item) in items.enumerated() {
            guard let text = item.string else {
                sink.add("\(at(key))[\(index)]", "expected a string, found \(item.kindName)")
                continue
            }
            result.append(text)
        }
        return result
    }

    /// A member that must be one of `choices`.
    func choice<T: RawRepresentable & CaseIterable>(_ key: String, as type: T.Type) -> T? where T.RawValue == String {
        guard let text = string(key) else { return nil }
        guard let value = T(rawValue: text) else {
            let names = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            sink.add(at(key), "unknown value \"\(text)\"; expected one of \(names)")
            return nil
        }
        return value
    }

    /// The longest span a catalog may give, in seconds, for error messages.
    static let longestSeconds = Int64(TimeSpan.longest.seconds)
    /// The instants a catalog may give, for error messages.
    static let representableRange = "the representable range 0000-01-01T00:00:00Z…9999-12-31T23:59:59Z"

    /// A time as RFC 3339 text or Unix seconds.
    func timestamp(_ key: String) -> Timestamp? {
        guard let value = self[key], !value.isNull else { return nil }
        if let text = value.string {
            guard let time = Timestamp(rfc3339: text) else {
                sink.add(at(key), "expected an RFC 3339 time such as 2026-03-02T08:00:00Z, found \"\(text)\"")
                return nil
            }
            return time
        }
        switch value.number {
        case let number? where number.isFinite:
            guard let time = Timestamp(checkedSeconds: number) else {
                sink.add(at(key), "\(number) Unix seconds is outside \(Self.representableRange)")
                return nil
            }
            return time
        default:
            sink.add(at(key), "expected an RFC 3339 time or Unix seconds, found \(value.kindName)")
            return nil
        }
    }
}
