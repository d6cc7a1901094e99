#pragma once
#include <zlib.h>

// deflateInit2 and inflateInit2 are macros (they pass the library version and the stream
// size for a compatibility check), which Swift cannot call; these wrappers can be.

static inline int czlib_deflate_init2(z_streamp stream, int level, int window_bits, int mem_level, int strategy) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, mem_level, strategy);
}

static inline int czlib_inflate_init2(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
