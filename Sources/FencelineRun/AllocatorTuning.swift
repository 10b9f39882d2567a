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
    /// that grows by `mprotect` in small steps, tens of thousands of calls for a large catalog;
    /// one arena grown by `brk` with a large top pad grows in a few dozen. The `--threads`
    /// pipeline's threads share the one arena.
    public static func configureForBatchWork() {
        #if canImport(Glibc)
            _ = mallopt(M_ARENA_MAX, 1)
            _ = mallopt(M_TOP_PAD, 64 << 20)
        #endif
    }

    /// Returns the free pages of every malloc arena to the system. Records freed one by one
    /// leave glibc's heap full of free chunks it keeps for reuse, so a long-lived process whose
    /// engine forgot a fleet would otherwise keep its resident size; it walks the heap once.
    public static func returnFreePages() {
        #if canImport(Glibc)
            _ = malloc_trim(0)
        #endif
    }
}
