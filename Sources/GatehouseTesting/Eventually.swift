/// Polls `condition` until it holds or `timeout` passes, for state another thread reaches (a
/// log's flusher, an actor's publication); answers whether it held.
public func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
