// Placeholder; real suites live beside it.
