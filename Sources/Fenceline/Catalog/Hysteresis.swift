/// How a region trigger turns noisy fixes into clean transitions (SPEC §5).
///
/// Start from a ``Preset`` and refine single fields, as the catalog's `hysteresis` objects do.
public struct Hysteresis: Hashable, Sendable {
    /// Metres a fix must be inside the boundary to count towards an enter.
    public var enterCushion: Double
    /// Metres a fix must be outside the boundary to count towards an exit.
    public var exitCushion: Double
    /// How long the enter condition must hold before the enter is confirmed.
    public var enterDelay: TimeSpan
    /// How long the exit condition must hold before the exit is confirmed.
    public var exitDelay: TimeSpan
    /// How many fixes in a row must meet the condition.
    public var minFixes: Int
    /// How a fix's accuracy enters the conditions.
    public var accuracy: AccuracyMode
    /// Fixes less accurate than this many metres are ignored; `nil` keeps every fix.
    public var maxAccuracy: Double?
    /// In `overlap` mode, the share of the accuracy disc inside that counts as entering.
    public var enterOverlap: Double
    /// In `overlap` mode, the share at or below which a fix counts as exiting.
    public var exitOverlap: Double

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
        enterCushion = 0
        exitCushion = preset == .default ? 20 : 0
        enterDelay = .zero
        exitDelay = preset == .default ? TimeSpan(seconds: 20) : .zero
        minFixes = 1
        accuracy = preset == .android ? .overlap : .ignore
        maxAccuracy = nil
        enterOverlap = 0.85
        exitOverlap = 0.15
    }

    /// The `default` preset.
    public static let `default` = Hysteresis(preset: .default)
    /// The `naive` preset.
    public static let naive = Hysteresis(preset: .naive)
    /// The `android` preset.
    public static let android = Hysteresis(preset: .android)
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
