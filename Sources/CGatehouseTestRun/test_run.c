#include <stdlib.h>

// Runs when the test bundle loads, before Swift Testing reads its configuration: unless the
// caller chose a width, at most 16 test cases run at once. Unbounded, every test of the suite
// starts at once, and the actors of the servers under test queue behind all of their work on
// the two threads of the concurrency pool: on a loaded two-core machine one hop of a request
// then waited longer than the tests' timeouts (`gatehouse call` was killed after 120 s).
__attribute__((constructor)) static void cgh_bound_parallel_test_cases(void) {
    setenv("SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH", "16", 0);
}
