import GatehouseAppStore
import Synchronization

/// The token the client sends, signed once and reused until it nears its end: a token lives
/// ``lifetimeSeconds`` and is replaced ``renewalMarginSeconds`` before it expires, so a request
/// and its retries never carry one that runs out on the way.
final class AppStoreServerAPITokens: Sendable {
    static let lifetimeSeconds: Int64 = 20 * 60
    static let renewalMarginSeconds: Int64 = 5 * 60

    private let key: AppStoreServerAPIKey
    private let currentTimeMilliseconds: @Sendable () -> Int64
    private let cached = Mutex<(token: String, issuedAt: Int64)?>(nil)

    init(key: AppStoreServerAPIKey, currentTimeMilliseconds: @escaping @Sendable () -> Int64) {
        self.key = key
        self.currentTimeMilliseconds = currentTimeMilliseconds
    }

    /// The cached token, or a new one when it is near its end (or the clock went back past its
    /// `iat`, which Apple would refuse).
    func current() throws(AppStoreServerAPIError) -> String {
        let now = currentTimeMilliseconds() / 1000
        // Signed under the lock: tasks that find the token stale together sign it once.
        let result = cached.withLock { cached -> Result<String, AppStoreServerAPIKeyError> in
            if let cached, cached.issuedAt <= now,
                now < cached.issuedAt + Self.lifetimeSeconds - Self.renewalMarginSeconds
            {
                return .success(cached.token)
            }
            do throws(AppStoreServerAPIKeyError) {
                let token = try key.token(issuedAt: now, lifetimeSeconds: Self.lifetimeSeconds)
                cached = (token, now)
                return .success(token)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let token): return token
        case .failure(let error): throw AppStoreServerAPIError(code: .unauthorized, message: "cannot sign a token: \(error)")
        }
    }
}
