public import GatehouseCore

extension AppStoreVerificationError {
    /// The wire error: `invalid_signature` or `wrong_app`, with the reason as its message.
    public var gatehouseError: GatehouseError {
        switch code {
        case .invalidSignature: GatehouseError(.invalidSignature, reason)
        case .wrongApp: GatehouseError(.wrongApp, reason)
        }
    }
}
