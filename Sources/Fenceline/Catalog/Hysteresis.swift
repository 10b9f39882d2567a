/// How a region trigger turns noisy fixes into clean transitions (SPEC §5).
///
/// Start from a ``Preset`` and refine single fields, as the catalog's `hysteresis` objects do.
/// A value type over a shared, copy-on-write box: the requests of a catalog that take its
/// defaults (or name a preset) share one, where each would otherwise hold all nine fields.
public struct Hysteresis: Hashable, Sendable {
    /// Metres a fix must be inside the boundary to count towards an enter.
    public var enterCushion: Double {
        get { storage.fields.enterCushion }
        set { unique().fields.enterCushion = newValue }
    }
    /// Metres a fix must be outside the boundary to count towards an exit.
    public var exitCushion: Double {
        get { storage.fields.exitCushion }
        set { unique().fields.exitCushion = newValue }
    }
    /// How long the enter condition must hold before the enter is confirmed.
    public var enterDelay: TimeSpan {
        get { storage.fields.enterDelay }
        set { unique().fields.enterDelay = newValue }
    }
    /// How long the exit condition must hold before the exit is confirmed.
    public var exitDelay: TimeSpan {
        get { storage.fields.exitDelay }
        set { unique().fields.exitDelay = newValue }
    }
    /// How many fixes in a row must meet the condition.
    public var minFixes: Int {
        get { storage.fields.minFixes }
        set { unique().fields.minFixes = newValue }
    }
    /// How a fix's accuracy enters the conditions.
    public var accuracy: AccuracyMode {
        get { storage.fields.accuracy }
        set { unique().fields.accuracy = newValue }
    }
    /// Fixes less accurate than this many metres are ignored; `nil` keeps every fix.
    public var maxAccuracy: Double? {
        get { storage.fields.maxAccuracy }
        set { unique().fields.maxAccuracy = newValue }
    }
    /// In `overlap` mode, the share of the accuracy disc inside that counts as entering.
    public var enterOverlap: Double {
        get { storage.fields.enterOverlap }
        set { unique().fields.enterOverlap = newValue }
    }
    /// In `overlap` mode, the share at or below which a fix counts as exiting.
    public var exitOverlap: Double {
        get { storage.fields.exitOverlap }
        set { unique().fields.exitOverlap = newValue }
    }

    private var storage: Storage

    /// The named starting points of SPEC §5.
    public enum Preset: String, Hashable, Sendable, CaseIterable {
        /// Cushion 0 in, 20 m out, no enter delay, 20 s exit delay, accuracy ignored.
        case `default`
        /// Everything zero: inside exactly when `s ≤ 0` (Tile38, Traccar, Amazon Location parity).
        case naive
        /// Android-like accuracy-disc overlap, no cushions and no delays.
        case android
    }

    /// The settings of `preset`.
    public init(preset: Preset) {
        storage = Storage(
            Fields(
                enterCushion: 0, exitCushion: preset == .default ? 20 : 0, enterDelay: .zero,
                exitDelay: preset == .default ? TimeSpan(seconds: 20) : .zero, minFixes: 1,
                accuracy: preset == .android ? .overlap : .ignore, maxAccuracy: nil, enterOverlap: 0.85,
                exitOverlap: 0.15))
    }

    /// The `default` preset.
    public static let `default` = Hysteresis(preset: .default)
    /// The `naive` preset.
    public static let naive = Hysteresis(preset: .naive)
    /// The `android` preset.
    public static let android = Hysteresis(preset: .android)

    /// The box, copied first when another value shares it.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        return storage
    }

    public static func == (a: Hysteresis, b: Hysteresis) -> Bool {
        a.storage === b.storage || a.storage.fields == b.storage.fields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.fields)
    }

    private struct Fields: Hashable {
        var enterCushion: Double
        var exitCushion: Double
        var enterDelay: TimeSpan
        var exitDelay: TimeSpan
        var minFixes: Int
        var accuracy: AccuracyMode
        var maxAccuracy: Double?
        var enterOverlap: Double
        var exitOverlap: Double
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

/// How a fix's accuracy radius `a` enters the region conditions (SPEC §5 table).
public enum AccuracyMode: String, Hashable, Sendable, CaseIterable {
    /// Enter `s ≤ -enterCushion`, exit `s > exitCushion`.
    case ignore
    /// ArcGIS-like: enter `s + a ≤ -enterCushion`, exit `s - a > exitCushion`.
    case conservative
    /// Radar-like: enter `s - a ≤ -enterCushion`, exit `s - a > exitCushion`.
    case generous
    /// Android-like: by the share of the accuracy disc inside the fence.
    case overlap
}
