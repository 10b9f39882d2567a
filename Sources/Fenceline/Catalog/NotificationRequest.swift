/// A notification request: identifier + content + trigger, as in UserNotifications, plus an
/// optional device scope and schedule.
///
/// A value type over one shared, copy-on-write box: a catalog's array and the engine's entry for
/// each request hold the same box rather than a copy of every field each.
public struct NotificationRequest: Hashable, Sendable {
    /// The identifier; adding a request with an existing one replaces it.
    public var id: String {
        get { storage.fields.id }
        set { unique().fields.id = newValue }
    }
    /// What the notification says.
    public var content: NotificationContent {
        get { storage.fields.contentBox?.content ?? NotificationContent() }
        set { unique().fields.contentBox = ContentBox.make(newValue) }
    }
    /// What makes it fire.
    public var trigger: Trigger {
        get { storage.fields.trigger }
        set { unique().fields.trigger = newValue }
    }
    /// The devices it applies to; `nil` means every device.
    public var devices: [String]? {
        get { storage.fields.devices }
        set { unique().fields.devices = newValue }
    }
    /// When it may notify; `nil` means always.
    public var schedule: Schedule? {
        get { storage.fields.schedule }
        set { unique().fields.schedule = newValue }
    }
    /// Which fixes it takes (region requests), the catalog's defaults already applied.
    public var filters: PositionFilters {
        get { storage.fields.fleetRules?.filters ?? PositionFilters() }
        set { unique().fields.fleetRules = FleetRules.make(filters: newValue, expires: expires) }
    }
    /// When it leaves pending (SPEC §12): each device inside it then gets one `exit` with
    /// reason `expired`; `nil` never.
    public var expires: Timestamp? {
        get { storage.fields.fleetRules?.expires }
        set { unique().fields.fleetRules = FleetRules.make(filters: filters, expires: newValue) }
    }

    private var storage: Storage

    /// Creates a request.
    public init(
        id: String, content: NotificationContent = NotificationContent(), trigger: Trigger,
        devices: [String]? = nil, schedule: Schedule? = nil, filters: PositionFilters = PositionFilters(),
        expires: Timestamp? = nil
    ) {
        self.init(
            id: id, contentIfAny: content, trigger: trigger, devices: devices, schedule: schedule, filters: filters,
            expires: expires)
    }

    /// Creates a request whose content is `nil` when a catalog gave none: a decoder of a million
    /// requests then makes and destroys no empty content per request.
    package init(
        id: String, contentIfAny content: NotificationContent?, trigger: Trigger, devices: [String]?,
        schedule: Schedule?, filters: PositionFilters, expires: Timestamp?
    ) {
        storage = Storage(
            Fields(
                id: id, contentBox: content.flatMap(ContentBox.make), trigger: trigger, devices: devices,
                schedule: schedule, fleetRules: FleetRules.make(filters: filters, expires: expires)))
    }

    /// Whether any field of the content is set (``content`` without making an empty one).
    package var hasContent: Bool { storage.fields.contentBox != nil }

    /// Asks for the cache lines of the request's box without waiting for them, for a bulk load
    /// reading requests scattered through memory.
    @inline(__always)
    package func prefetch() {
        Fenceline.prefetch(
            UnsafeRawPointer(Unmanaged.passUnretained(storage).toOpaque()),
            byteCount: 16 + MemoryLayout<Fields>.size)  // the object header, then the fields
    }

    /// The box, copied first when another value shares it.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        return storage
    }

    public static func == (a: NotificationRequest, b: NotificationRequest) -> Bool {
        a.storage === b.storage || a.storage.fields == b.storage.fields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.fields)
    }

    private struct Fields: Hashable {
        var id: String
        /// The content, boxed and `nil` when empty: inline it would make every box 128 bytes larger.
        var contentBox: ContentBox?
        var trigger: Trigger
        var devices: [String]?
        var schedule: Schedule?
        /// The filters and expiry, boxed and `nil` when neither is set (most requests).
        var fleetRules: FleetRules?
    }

    /// Mutated only through ``unique()``, so a box other values share never changes (what makes
    /// it safe to send).
    private final class Storage: @unchecked Sendable {
        var fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }
}

/// A request's content, immutable (a setter boxes anew), compared by value.
private final class ContentBox: Hashable, Sendable {
    let content: NotificationContent

    private init(_ content: NotificationContent) {
        self.content = content
    }

    /// The box, or `nil` for empty content (so equal requests hold equal boxes or none).
    static func make(_ content: NotificationContent) -> ContentBox? {
        content.isEmpty ? nil : ContentBox(content)
    }

    static func == (a: ContentBox, b: ContentBox) -> Bool { a.content == b.content }

    func hash(into hasher: inout Hasher) { hasher.combine(content) }
}

/// A request's position filters and expiry, immutable (a setter boxes anew), compared by value.
private final class FleetRules: Hashable, Sendable {
    let filters: PositionFilters
    let expires: Timestamp?

    private init(filters: PositionFilters, expires: Timestamp?) {
        self.filters = filters
        self.expires = expires
    }

    /// The box, or `nil` when there is nothing to hold (so equal requests hold equal boxes or none).
    static func make(filters: PositionFilters, expires: Timestamp?) -> FleetRules? {
        filters.isEmpty && expires == nil ? nil : FleetRules(filters: filters, expires: expires)
    }

    static func == (a: FleetRules, b: FleetRules) -> Bool { a.filters == b.filters && a.expires == b.expires }

    func hash(into hasher: inout Hasher) {
        hasher.combine(filters)
        hasher.combine(expires)
    }
}

/// A set of actions an app shows with a notification (`UNNotificationCategory`).
public struct NotificationCategory: Hashable, Sendable {
    /// The identifier content names in `category`.
    public var id: String
    /// The buttons, in order.
    public var actions: [NotificationAction]
    /// Category options such as `customDismissAction`.
    public var options: [String]

    /// Creates a category.
    public init(id: String, actions: [NotificationAction] = [], options: [String] = []) {
        self.id = id
        self.actions = actions
        self.options = options
    }
}

/// One button of a category (`UNNotificationAction`, or `UNTextInputNotificationAction` with text input).
public struct NotificationAction: Hashable, Sendable {
    /// The identifier the app receives.
    public var id: String
    /// The button's title.
    public var title: String
    /// `foreground`, `destructive`, `authenticationRequired`.
    public var options: [String]
    /// With a value, the action asks for text.
    public var textInput: TextInput?

    /// The text field of a text-input action.
    public struct TextInput: Hashable, Sendable {
        /// The send button's title.
        public var button: String
        /// The field's placeholder.
        public var placeholder: String

        /// Creates a text input.
        public init(button: String, placeholder: String) {
            self.button = button
            self.placeholder = placeholder
        }
    }

    /// Creates an action.
    public init(id: String, title: String, options: [String] = [], textInput: TextInput? = nil) {
        self.id = id
        self.title = title
        self.options = options
        self.textInput = textInput
    }
}

/// A trigger catalog: categories, requests, and the hysteresis defaults for region requests
/// (SPEC §2). Requests decoded from it already carry the defaults.
public struct Catalog: Hashable, Sendable {
    /// The categories requests may name.
    public var categories: [NotificationCategory]
    /// The requests, in catalog order.
    public var requests: [NotificationRequest]
    /// The hysteresis region requests start from; also used for requests added mid-stream.
    public var defaultHysteresis: Hysteresis
    /// The position filters requests start from (`defaults.filters`); their `maxFuture` also
    /// makes a line stamped too far ahead a bad line.
    public var defaultFilters: PositionFilters

    /// Both defaults, as requests added mid-stream get them.
    public var defaults: RequestDefaults {
        RequestDefaults(hysteresis: defaultHysteresis, filters: defaultFilters)
    }

    /// The arrays a decoder validated, kept so the engine need not check every fence with GEOS a
    /// second time. Holding them makes any later change to `requests` or `categories` copy into a
    /// new buffer (copy-on-write), so comparing buffers tells, in O(1), that nothing changed.
    private var validated: (requests: [NotificationRequest], categories: [NotificationCategory])?

    /// Records that the requests, as they are now, passed validation against the categories.
    package mutating func markValidated() {
        validated = (requests, categories)
    }

    /// Whether ``markValidated()`` was called and nothing changed since.
    package var isValidated: Bool {
        guard let validated else { return false }
        func same<T>(_ a: [T], _ b: [T]) -> Bool {
            a.count == b.count
                && a.withUnsafeBufferPointer { $0.baseAddress } == b.withUnsafeBufferPointer { $0.baseAddress }
        }
        return same(validated.requests, requests) && same(validated.categories, categories)
    }

    public static func == (lhs: Catalog, rhs: Catalog) -> Bool {
        lhs.categories == rhs.categories && lhs.requests == rhs.requests
            && lhs.defaultHysteresis == rhs.defaultHysteresis && lhs.defaultFilters == rhs.defaultFilters
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(categories)
        hasher.combine(requests)
        hasher.combine(defaultHysteresis)
        hasher.combine(defaultFilters)
    }

    /// Creates a catalog.
    public init(
        categories: [NotificationCategory] = [], requests: [NotificationRequest] = [],
        defaultHysteresis: Hysteresis = .default, defaultFilters: PositionFilters = PositionFilters()
    ) {
        self.categories = categories
        self.requests = requests
        self.defaultHysteresis = defaultHysteresis
        self.defaultFilters = defaultFilters
    }
}
