#if canImport(Glibc)
    import CMalloc
#endif

/// The C allocator, asked to give memory back.
package enum Allocator {
    /// Returns the free pages of every malloc arena to the system. Arrays of records freed one by
    /// one leave glibc's heap full of free chunks it keeps for reuse, so after a fleet is
    /// forgotten the resident size would not come down without it; it walks the heap once, which
    /// renumbering (itself a pass over every device) pays for.
    package static func returnFreePages() {
        #if canImport(Glibc)
            _ = malloc_trim(0)
        #endif
    }
}
