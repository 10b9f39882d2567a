import Fenceline

/// An ``RFC3339StreamParser`` held by reference, so a line decoder's read stays non-mutating: a
/// decoder and its copies share one, so each belongs to one thread.
final class TimeParser {
    /// Unchecked: confined to the decoder's thread, and a dynamic exclusivity check per line
    /// showed in profiles.
    @exclusivity(unchecked) var parser = RFC3339StreamParser()
}
