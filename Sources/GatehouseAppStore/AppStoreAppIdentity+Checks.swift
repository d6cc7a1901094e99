/// Apple's rules for matching verified data to the configured app, in Apple's order. Call them
/// only on verified data: a signature failure must win over a wrong app.
extension AppStoreAppIdentity {
    /// A notification: bundle id and, in production when configured, the App Apple ID; then
    /// the environment. The app is read from `data`, `summary`, `externalPurchaseToken` or
    /// `appData`, the first present.
    public func check(_ notification: AppStoreNotification) throws(AppStoreVerificationError) {
        let scope = notification.appScope
        try checkBundle(scope.bundleId)
        if isProduction, let appAppleID, scope.appAppleId != appAppleID {
            throw .wrongApp(
                "notification is for App Apple ID \(scope.appAppleId.map(String.init) ?? "none"), not \(appAppleID)")
        }
        try checkEnvironment(scope.environment)
    }

    /// A transaction: bundle id, then environment.
    public func check(_ transaction: AppStoreTransaction) throws(AppStoreVerificationError) {
        try checkBundle(transaction.bundleId)
        try checkEnvironment(transaction.environment)
    }

    /// Renewal info, which names no app: environment only.
    public func check(_ renewalInfo: AppStoreRenewalInfo) throws(AppStoreVerificationError) {
        try checkEnvironment(renewalInfo.environment)
    }

    /// A notification and the transaction and renewal info decoded from it.
    public func check(_ verified: AppStoreVerifiedNotification) throws(AppStoreVerificationError) {
        try check(verified.notification)
        if let transaction = verified.transaction { try check(transaction) }
        if let renewalInfo = verified.renewalInfo { try check(renewalInfo) }
    }

    private func checkBundle(_ bundleId: String?) throws(AppStoreVerificationError) {
        guard bundleId == bundleID else {
            throw .wrongApp("signed data is for bundle \(bundleId.map { "\"\($0)\"" } ?? "none"), not \"\(bundleID)\"")
        }
    }

    private func checkEnvironment(_ signed: AppStoreEnvironment?) throws(AppStoreVerificationError) {
        guard let signed, signed.rawValue.lowercased() == environment.lowercased() else {
            throw .wrongApp("signed data is for environment \(signed?.rawValue ?? "none"), not \(environment)")
        }
    }
}
