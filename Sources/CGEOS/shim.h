// GEOS's reentrant C API only; the non-reentrant globals are never used.
#define GEOS_USE_ONLY_R_API
#include <geos_c.h>
