#pragma once

// Nothing to call: the module's one job is the setting test_run.c makes when the test bundle
// loads (a bound on the test cases Swift Testing runs at once).
