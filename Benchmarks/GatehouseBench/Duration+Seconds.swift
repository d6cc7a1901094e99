extension Duration {
    /// The duration as a floating-point number of seconds, for rates and averages.
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
