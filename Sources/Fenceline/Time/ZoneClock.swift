import Foundation

/// Local wall-clock time in an IANA zone, resolved to instants the way SPEC §7 asks: a local time
/// that does not exist (a DST gap) resolves to the first instant after the gap, one that occurs
/// twice resolves to its first occurrence.
///
/// Offsets come from Foundation's `TimeZone`; the resolution is ours, because Foundation's
/// `Calendar.nextDate(after:matching:…)` on Linux skips some gap days, fires a repeated hour twice
/// and skips a day at Lord Howe's 30-minute shift (see the README's calendar notes).
struct ZoneClock {
    let zone: TimeZone

    init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.zone = zone
    }

    /// The zone's offset from UTC in seconds at `seconds` since the epoch.
    @inline(__always)
    func offset(atSecond seconds: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds))))
    }

    /// Local wall-clock seconds (civil seconds since 1970-01-01T00:00 local) at an instant.
    func local(atSecond seconds: Int64) -> Int64 {
        seconds + offset(atSecond: seconds)
    }

    /// The instant (UTC seconds) at which the wall clock reads `local`: the earliest one when it
    /// reads it twice, the end of the gap when it never does.
    func instant(forLocal local: Int64) -> Int64 {
        // No zone's offset is more than 26 hours away from 0, so both neighbours of any transition
        // near `local` are seen from these two probes.
        let before = offset(atSecond: local - 26 * 3600)
        let after = offset(atSecond: local + 26 * 3600)
        var candidates = Set([before, after, offset(atSecond: local - before), offset(atSecond: local - after)])
            .map { local - $0 }.filter { self.local(atSecond: $0) == local }
        candidates.sort()
        if let first = candidates.first { return first }
        // A gap: the wall clock jumps over `local`. The transition lies between the instants the
        // two offsets would give; find the first second with the later offset.
        let offsets = Set([before, after, offset(atSecond: local - before), offset(atSecond: local - after)]).sorted()
        var low = local - offsets.last!
        var high = local - offsets.first!
        // Invariant: local(low) < local, local(high) > local.
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if self.local(atSecond: middle) < local { low = middle } else { high = middle }
        }
        return high
    }
}
