public import GatehouseBase

/// Errors of bytes read out of a bigger whole (a snapshot body's section, the feed's details)
/// name offsets in the whole.
extension ByteReaderError {
    /// The same error `distance` bytes further on: for bytes read out of a bigger whole.
    public func moved(by distance: Int) -> ByteReaderError {
        switch self {
        case .truncated(let at): .truncated(at: at + distance)
        case .invalid(let what, let at): .invalid(what, at: at + distance)
        }
    }
}
