/// What a notification says: the fields of `UNNotificationContent` that travel to a device.
///
/// `title`, `subtitle`, `body`, `thread` and attachment URLs may use the placeholders `{device}`,
/// `{request}`, `{event}` and `{time}`, filled in when an event fires, and in a proximity event's
/// content `{other}` (the pair's other device).
public struct NotificationContent: Hashable, Sendable {
    /// The headline.
    public var title: String?
    /// A line under the title.
    public var subtitle: String?
    /// The message.
    public var body: String?
    /// The number for the app icon's badge.
    public var badge: Int?
    /// The sound to play (`"default"` or a file name).
    public var sound: String?
    /// The identifier of a category in the catalog, whose actions the app shows as buttons.
    public var category: String?
    /// The identifier that groups notifications into one thread.
    public var thread: String?
    /// Custom data passed through untouched.
    public var userInfo: JSONObject?
    /// Ask for a notification service extension to modify the content (APNs `mutable-content`).
    public var mutableContent: Bool
    /// Media the app's notification service extension fetches and shows (at most 10).
    public var attachments: [NotificationAttachment]

    /// Creates content; every field is optional.
    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, badge: Int? = nil,
        sound: String? = nil, category: String? = nil, thread: String? = nil, userInfo: JSONObject? = nil,
        mutableContent: Bool = false, attachments: [NotificationAttachment] = []
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.badge = badge
        self.sound = sound
        self.category = category
        self.thread = thread
        self.userInfo = userInfo
        self.mutableContent = mutableContent
        self.attachments = attachments
    }

    /// The most UTF-8 bytes a title, subtitle, body or thread may hold.
    public static let maximumFieldBytes = 65536

    /// Whether no field is set. Field by field: comparing with a new empty content makes and
    /// destroys one, and every request of a catalog is asked.
    public var isEmpty: Bool {
        title == nil && subtitle == nil && body == nil && badge == nil && sound == nil && category == nil
            && thread == nil && userInfo == nil && !mutableContent && attachments.isEmpty
    }

    /// The content with its placeholders filled in.
    public func rendered(
        device: String?, request: String, event: String, time: Timestamp, other: String? = nil
    ) -> NotificationContent {
        // Field by field rather than through an array of them: most content has no placeholder,
        // and this runs for every event.
        func hasPlaceholder(_ text: String?) -> Bool { text?.utf8.contains(UInt8(ascii: "{")) ?? false }
        guard
            hasPlaceholder(title) || hasPlaceholder(subtitle) || hasPlaceholder(body) || hasPlaceholder(thread)
                || attachments.contains(where: { hasPlaceholder($0.url) })
        else { return self }
        func fill(_ text: String?) -> String? {
            guard let text, text.contains("{") else { return text }
            let filled =
                text
                .replacingAll("{device}", with: device ?? "")
                .replacingAll("{request}", with: request)
                .replacingAll("{event}", with: event)
                .replacingAll("{time}", with: time.rfc3339)
            // Only proximity events have another device; elsewhere `{other}` stays as written.
            return other.map { filled.replacingAll("{other}", with: $0) } ?? filled
        }
        var copy = self
        copy.title = fill(title)
        copy.subtitle = fill(subtitle)
        copy.body = fill(body)
        copy.thread = fill(thread)
        if attachments.contains(where: { hasPlaceholder($0.url) }) {
            let stamp = time.rfc3339
            copy.attachments = attachments.map {
                $0.rendered(device: device, request: request, event: event, time: stamp, other: other)
            }
        }
        return copy
    }
}

extension String {
    /// The string with every occurrence of `target` replaced (no Foundation needed).
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        return asciiReplacingAll(target, with: replacement) ?? characterWiseReplacingAll(target, with: replacement)
    }

    /// ``replacingAll(_:with:)`` character by character, for any text.
    func characterWiseReplacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty, contains(target) else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        result += rest
        return result
    }

    /// ``replacingAll(_:with:)`` by bytes, when the string and `target` are ASCII (each byte a
    /// character, so the matches are the same); `nil` otherwise. Placeholders are filled for every
    /// event, and the character-wise search took a tenth of a proximity run that notifies often.
    private func asciiReplacingAll(_ target: String, with replacement: String) -> String? {
        var text = self
        var pattern = target
        return text.withUTF8 { bytes -> String? in
            pattern.withUTF8 { needle -> String? in
                guard bytes.allSatisfy({ $0 < 0x80 }), needle.allSatisfy({ $0 < 0x80 }) else { return nil }
                guard bytes.count >= needle.count else { return self }
                var result: [UInt8] = []
                var copied = 0
                var position = 0
                let first = needle[0]
                while position <= bytes.count - needle.count {
                    if bytes[position] == first
                        && UnsafeBufferPointer(rebasing: bytes[position..<(position + needle.count)]).elementsEqual(
                            needle)
                    {
                        if result.isEmpty { result.reserveCapacity(bytes.count + replacement.utf8.count) }
                        result.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<position]))
                        result.append(contentsOf: replacement.utf8)
                        position += needle.count
                        copied = position
                    } else {
                        position += 1
                    }
                }
                guard copied > 0 else { return self }
                result.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied...]))
                return String(decoding: result, as: UTF8.self)
            }
        }
    }
}
