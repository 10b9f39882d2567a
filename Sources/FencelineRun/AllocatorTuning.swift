import FencelineFormats

#if canImport(Glibc)
    import CMalloc
#endif

/// Process-wide allocator settings for a batch run: call first thing in `main`, before any
/// thread allocates.
public enum AllocatorTuning {
    /// One malloc arena, grown 64 MiB at a time.
    ///
    /// The engine runs on a Swift concurrency worker thread, which glibc gives an arena of its own
    /// that grows by `mprotect` in small steps: loading a 100k-fence catalog made 36,000 such
    /// calls, and they and their page faults were about a fifth of its profile. With one arena,
    /// grown by `brk` with a large top pad, it makes 41, and loading that catalog took 18 % less
    /// time and a 1 M-reading city run 15 % less (best of 8, `Tools/bench` workloads). The
    /// `--threads` pipeline's threads share the one arena.
    public static func configureForBatchWork() {
        #if canImport(Glibc)
            _ = mallopt(M_ARENA_MAX, 1)
            _ = mallopt(M_TOP_PAD, 64 << 20)
        #endif
    }
}
