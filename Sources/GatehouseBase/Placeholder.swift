// Placeholder so the target builds while the package is laid out; replaced by real sources.
