/// Two devices coming near each other (SPEC §12, device proximity): a pair of devices, one
/// matching ``among`` and the other ``to``, enters when their last fixes are within ``near``
/// metres and exits when they are farther than ``far`` or one fix grows older than ``maxAge``.
public struct ProximityTrigger: Hashable, Sendable {
    /// Metres within which a pair enters (haversine, the boundary counts), > 0.
    public var near: Double
    /// Metres beyond which a pair exits, ≥ ``near``; between the two nothing changes.
    public var far: Double
    /// The devices a pair's `device` is one of: ids, or prefixes ending in `*`.
    public var among: [DevicePattern]
    /// The devices a pair's `other` is one of; `nil` pairs devices of ``among`` with each other.
    public var to: [DevicePattern]?
    /// How old, at the later fix's time, the older of the two fixes may be; `nil` is no limit.
    public var maxAge: TimeSpan?
    /// How long the pair must stay within ``near`` before it enters.
    public var enterDelay: TimeSpan
    /// How long the pair must stay beyond ``far`` before it exits.
    public var exitDelay: TimeSpan
    /// Report enters.
    public var notifyOnEntry: Bool
    /// Report exits.
    public var notifyOnExit: Bool
    /// Whether the trigger fires on every transition, or once per pair.
    public var repeats: Bool

    /// Creates a proximity trigger with the defaults of SPEC §12 (`far` defaults to `near`).
    public init(
        near: Double, far: Double? = nil, among: [DevicePattern], to: [DevicePattern]? = nil, maxAge: TimeSpan? = nil,
        enterDelay: TimeSpan = .zero, exitDelay: TimeSpan = .zero, notifyOnEntry: Bool = true,
        notifyOnExit: Bool = true, repeats: Bool = true
    ) {
        self.near = near
        self.far = far ?? near
        self.among = among
        self.to = to
        self.maxAge = maxAge
        self.enterDelay = enterDelay
        self.exitDelay = exitDelay
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.repeats = repeats
    }
}

/// A device id, or a prefix when it ends in `*` (`"tag-*"`; `"*"` alone matches every device).
public struct DevicePattern: Hashable, Sendable, CustomStringConvertible {
    /// The pattern as written.
    public var text: String

    /// Creates a pattern from its text.
    public init(_ text: String) {
        self.text = text
    }

    /// Whether a `*` stands anywhere but at the end (a catalog error).
    public var hasInnerWildcard: Bool { text.utf8.dropLast().contains(UInt8(ascii: "*")) }

    /// Whether `device` matches, byte for byte (device ids are told apart by their bytes).
    public func matches(_ device: String) -> Bool {
        var pattern = text.utf8[...]
        guard pattern.last == UInt8(ascii: "*") else { return pattern.elementsEqual(device.utf8) }
        pattern = pattern.dropLast()
        return device.utf8.starts(with: pattern)
    }

    public var description: String { text }
}
