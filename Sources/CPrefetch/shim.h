// A software prefetch, which Swift does not expose: it asks for the cache line holding `address`
// without waiting for it, so loads of scattered lines can overlap.
static inline void fenceline_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }
