/// A JSON value kept as written: object members in order, numbers with their literal text.
///
/// Used where the engine carries user data through untouched (`userInfo`, APNs custom keys).
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON number: its literal text (for exact output) and its value.
public struct JSONNumber: Hashable, Sendable {
    /// The number as it was written, such as `4` or `1.50`.
    public var text: String
    /// The number's value.
    public var value: Double

    /// Creates a number from its literal text and value.
    public init(text: String, value: Double) {
        self.text = text
        self.value = value
    }
}

/// A JSON object whose members keep their order.
public struct JSONObject: Hashable, Sendable {
    /// The members in the order they were written; a repeated key keeps its last value on lookup.
    public var members: [(key: String, value: JSONValue)] {
        get { storage.map { ($0.key, $0.value) } }
        set { storage = newValue.map { Member(key: $0.key, value: $0.value) } }
    }

    private struct Member: Hashable, Sendable {
        var key: String
        var value: JSONValue
    }

    private var storage: [Member]

    /// Creates an object from members in order.
    public init(_ members: some Collection<(key: String, value: JSONValue)> = []) {
        storage = members.map { Member(key: $0.key, value: $0.value) }
    }

    /// The value of the last member named `key`.
    public subscript(key: String) -> JSONValue? {
        storage.last(where: { $0.key == key })?.value
    }

    /// The member names in order.
    public var keys: [String] { storage.map(\.key) }

    /// Whether the object has no members.
    public var isEmpty: Bool { storage.isEmpty }
}
