import FencelineFormats

#if canImport(Glibc)
    import Glibc
    /// Glibc imports `RUSAGE_SELF` as an enum case where `getrusage` takes its raw value.
    private let RUSAGE_SELF_WHO = __rusage_who_t(RUSAGE_SELF.rawValue)
#elseif canImport(Darwin)
    import Darwin
    private let RUSAGE_SELF_WHO = RUSAGE_SELF
#endif

/// A moment of a run: monotonic wall time, the process's CPU time (all threads) and the readings
/// read by then. `fenceline run --timings` reports the stretch from the first applied reading (or,
/// with `--threads`, from the start of the first batch, less the time the catalog took to add) to
/// the end, so a benchmark can time the streaming phase within one process rather than as the
/// difference of two noisy process runs.
public struct RunMark: Hashable, Sendable {
    /// Monotonic seconds.
    public var wall: Double
    /// CPU seconds of the process, user and system, every thread.
    public var cpu: Double
    /// Valid readings and control records read by then.
    public var readings: Int

    /// The current moment, with `readings` read.
    public static func now(readings: Int) -> RunMark {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        var usage = rusage()
        getrusage(RUSAGE_SELF_WHO, &usage)
        func seconds(_ value: timeval) -> Double { Double(value.tv_sec) + Double(value.tv_usec) / 1e6 }
        return RunMark(
            wall: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9,
            cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime), readings: readings)
    }
}
