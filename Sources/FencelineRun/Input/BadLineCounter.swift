public import FencelineFormats

/// Counts bad lines (SPEC §3.4): the first `maximumReported` are reported one by one, the rest only
/// counted; under `strict` the first one ends the input.
public struct BadLineCounter: Sendable {
    /// How many are reported one by one (`--max-errors`).
    public let maximumReported: Int
    /// Whether the first bad line stops (`--strict`).
    public let strict: Bool
    /// Bad lines so far.
    public private(set) var count = 0
    /// Under `strict`, the line that stopped the input.
    public private(set) var strictFailure: InputError?

    /// Creates a counter.
    public init(maximumReported: Int, strict: Bool) {
        self.maximumReported = maximumReported
        self.strict = strict
    }

    /// Counts `error`, reporting it while the limit allows; returns whether to go on.
    public mutating func reject(_ error: InputError, report: (String) -> Void) -> Bool {
        count += 1
        if count <= maximumReported { report(error.description) }
        guard strict else { return true }
        strictFailure = error
        return false
    }

    /// The closing line about the bad lines not reported one by one, `nil` when there are none.
    public var unreportedLine: String? {
        guard count > maximumReported else { return nil }
        return "fenceline: \(count - maximumReported) more bad lines not shown (--max-errors \(maximumReported))"
    }
}
