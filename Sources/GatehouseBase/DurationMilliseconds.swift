extension Duration {
    /// Whole milliseconds, for logs and stats (`took_ms`).
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}

extension Duration {
    /// Whole microseconds, for latency figures (`last_sync_us`).
    public var wholeMicroseconds: Int64 {
        components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
    }
}
