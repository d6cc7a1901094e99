#pragma once
#include <stdint.h>

// Relaxed atomics on plain 64-bit cells, for counters kept in arrays (Swift's `Atomic` cannot
// live in one). Relaxed: a counter orders nothing else, and a scrape only needs each cell
// whole, not in step with its neighbours. Static inline, so they compile into the caller.

/// Adds `amount` to `*cell` (wrapping at 2^64).
static inline void cgh_atomic_add_u64(uint64_t *cell, uint64_t amount) {
    __atomic_fetch_add(cell, amount, __ATOMIC_RELAXED);
}

/// Adds `amount` to `*cell` from the one thread that ever writes it: a plain load and store,
/// atomic so a reader on another thread reads the cell whole, but without the locked
/// read-modify-write `cgh_atomic_add_u64` costs (the hot path of a loop counting each answer).
static inline void cgh_owned_add_u64(uint64_t *cell, uint64_t amount) {
    __atomic_store_n(cell, __atomic_load_n(cell, __ATOMIC_RELAXED) + amount, __ATOMIC_RELAXED);
}

/// Reads `*cell` whole while others add to it.
static inline uint64_t cgh_atomic_load_u64(const uint64_t *cell) {
    return __atomic_load_n(cell, __ATOMIC_RELAXED);
}
