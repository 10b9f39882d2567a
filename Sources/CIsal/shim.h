// ISA-L's inflate (igzip), for reading gzip-compressed inputs (.gz) transparently.
#include <isa-l/igzip_lib.h>

// Clears the upper halves of the vector registers after a call into ISA-L's AVX code, which may
// leave them dirty: the calling thread's SSE arithmetic then ran about a tenth slower (measured).
static inline void fenceline_vector_reset(void) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx")) __asm__ volatile("vzeroupper" ::: "memory");
#endif
}
