/// A media file shown with a notification: the fields of `UNNotificationAttachment` that travel to
/// a device, where the app's notification service extension fetches `url` (SPEC §8).
///
/// `url` may use the content placeholders (`{device}`, `{request}`, `{event}`, `{time}`, and `{other}` in proximity events); the
/// values are percent-encoded when they are filled in, so a device name cannot break the URL.
public struct NotificationAttachment: Hashable, Sendable {
    /// Unique within the content.
    public var id: String
    /// An absolute `https`, `http` or `file` URL.
    public var url: String
    /// A MIME type (`image/png`) or a uniform type identifier (`public.jpeg`); `nil` leaves the
    /// type to the file's extension.
    public var type: String?
    /// Whether the thumbnail is hidden.
    public var thumbnailHidden: Bool?
    /// The part of an image used as the thumbnail, in unit coordinates.
    public var thumbnailClippingRect: ClippingRect?
    /// The frame of a movie used as the thumbnail, in seconds from its start.
    public var thumbnailTime: Double?

    /// A rectangle in unit coordinates: each value in 0…1.
    public struct ClippingRect: Hashable, Sendable {
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double

        /// Creates the rectangle.
        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    /// Creates an attachment; the options are optional.
    public init(
        id: String, url: String, type: String? = nil, thumbnailHidden: Bool? = nil,
        thumbnailClippingRect: ClippingRect? = nil, thumbnailTime: Double? = nil
    ) {
        self.id = id
        self.url = url
        self.type = type
        self.thumbnailHidden = thumbnailHidden
        self.thumbnailClippingRect = thumbnailClippingRect
        self.thumbnailTime = thumbnailTime
    }

    /// Whether any option is set.
    public var hasOptions: Bool { thumbnailHidden != nil || thumbnailClippingRect != nil || thumbnailTime != nil }

    /// The most attachments one content may carry.
    public static let maximumCount = 10

    /// The most UTF-8 bytes a URL may hold (before placeholders are filled in).
    public static let maximumURLBytes = 8192

    /// The URL schemes accepted, as the notification service extension can fetch them.
    public static let schemes: Set<String> = ["https", "http", "file"]

    /// Every problem with `attachments` as (path below the content, message).
    static func problems(in attachments: [NotificationAttachment]) -> [(path: String, message: String)] {
        var problems: [(path: String, message: String)] = []
        if attachments.count > maximumCount {
            problems.append(("attachments", "at most \(maximumCount) attachments (got \(attachments.count))"))
        }
        var seen: Set<String> = []
        for (index, attachment) in attachments.enumerated() {
            let path = "attachments[\(index)]"
            func add(_ field: String, _ message: String) { problems.append(("\(path).\(field)", message)) }
            if attachment.id.isEmpty {
                add("id", "id must be a non-empty string")
            } else if !seen.insert(attachment.id).inserted {
                add("id", "repeats the attachment id \"\(attachment.id)\"")
            }
            if attachment.url.utf8.count > maximumURLBytes {
                add("url", "url is \(attachment.url.utf8.count) bytes; at most \(maximumURLBytes) are accepted")
            } else if let problem = urlProblem(attachment.url) {
                add("url", problem)
            }
            if let type = attachment.type, !isTypeName(type) {
                add("type", "\"\(type)\" is neither a MIME type (image/png) nor a type identifier (public.jpeg)")
            }
            if let rect = attachment.thumbnailClippingRect {
                for (name, value) in [("x", rect.x), ("y", rect.y), ("width", rect.width), ("height", rect.height)]
                where !(0...1).contains(value) {
                    add("options.thumbnailClippingRect.\(name)", "\(name) must lie in 0…1 (got \(value))")
                }
            }
            if let time = attachment.thumbnailTime, !(time >= 0 && time.isFinite) {
                add("options.thumbnailTime", "thumbnailTime must be a number of seconds ≥ 0 (got \(time))")
            }
        }
        return problems
    }

    /// Why `url` is not an absolute URL of an accepted scheme, or `nil`.
    private static func urlProblem(_ url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else {
            return "\"\(url)\" is not an absolute URL; expected https://…, http://… or file://…"
        }
        let scheme = url[..<colon].lowercased()
        guard schemes.contains(scheme) else {
            return "unsupported URL scheme \"\(scheme)\"; expected https, http or file"
        }
        let rest = url[url.index(after: colon)...]
        guard rest.hasPrefix("//") else {
            return "\"\(url)\" is not an absolute URL: \"//\" must follow \"\(scheme):\""
        }
        let host = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if scheme != "file" && host.isEmpty { return "\"\(url)\" has no host" }
        if scheme == "file" && !host.isEmpty && host != "localhost" {
            return "a file URL names no host (file:///path), found \"\(host)\""
        }
        if let bad = url.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            return "the URL holds a space or control character (U+\(String(bad.value, radix: 16, uppercase: true)))"
        }
        return nil
    }

    /// Whether `name` is a MIME type (`type/subtype`) or a reverse-DNS type identifier.
    private static func isTypeName(_ name: String) -> Bool {
        func isToken(_ part: Substring) -> Bool {
            !part.isEmpty
                && part.unicodeScalars.allSatisfy {
                    $0.isASCII
                        && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
                            || "!#$&^_.+-".unicodeScalars.contains($0))
                }
        }
        let slash = name.split(separator: "/", omittingEmptySubsequences: false)
        if slash.count == 2 { return isToken(slash[0]) && isToken(slash[1]) }
        let dots = name.split(separator: ".", omittingEmptySubsequences: false)
        return slash.count == 1 && dots.count >= 2 && dots.allSatisfy(isToken)
    }

    /// The attachment with the placeholders in its URL filled in, each value percent-encoded.
    func rendered(device: String?, request: String, event: String, time: String, other: String?)
        -> NotificationAttachment
    {
        guard url.contains("{") else { return self }
        var copy = self
        copy.url =
            url
            .replacingAll("{device}", with: Self.percentEncoded(device ?? ""))
            .replacingAll("{request}", with: Self.percentEncoded(request))
            .replacingAll("{event}", with: Self.percentEncoded(event))
            .replacingAll("{time}", with: Self.percentEncoded(time))
        if let other { copy.url = copy.url.replacingAll("{other}", with: Self.percentEncoded(other)) }
        return copy
    }

    /// `text` with every byte but RFC 3986's unreserved characters percent-encoded.
    static func percentEncoded(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
