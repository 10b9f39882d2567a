// zlib, for reading gzip-compressed inputs (.gz) transparently.
#include <zlib.h>
