#if canImport(Glibc)
    import CMalloc
#endif

/// Process-wide allocator settings for a batch run: call first thing in `main`, before any
/// thread allocates.
public enum AllocatorTuning {
    /// One malloc arena, grown 64 MiB at a time.
    ///
    /// The engine runs on a Swift concurrency worker thread, which glibc gives an arena of its own
    /// that grows by `mprotect` in small steps; loading a 100k-fence catalog then spent a fifth of
    /// its time in those calls and the page faults they bring. With one arena, grown by `brk` with
    /// a large top pad, loading that catalog took 18 % less time and a 1 M-reading city run 15 %
    /// less (best of 8, `Tools/bench` workloads). The sharded pipeline allocates little per
    /// reading, so its threads sharing the arena costs nothing measurable.
    public static func configureForBatchWork() {
        #if canImport(Glibc)
            _ = mallopt(M_ARENA_MAX, 1)
            _ = mallopt(M_TOP_PAD, 64 << 20)
        #endif
    }
}
