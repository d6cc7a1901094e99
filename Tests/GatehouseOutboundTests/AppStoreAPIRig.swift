import GatehouseAppStore
import GatehouseBase
import GatehouseOutbound
import GatehouseTesting

/// A fake of Apple's API, a client pointed at it, and the clocks both read: the wall clock the
/// tokens are dated by, and a retry clock that skips its waits.
struct AppStoreAPIRig {
    let wallClock = ManualWallClock()
    let retryClock = VirtualRetryClock()
    let fake: FakeAppStoreAPI
    let http = OutboundHTTPClient()

    init() throws {
        fake = try FakeAppStoreAPI(clock: wallClock)
    }

    func client(
        key: AppStoreServerAPIKey? = nil, policy: RetryPolicy = RetryPolicy(), requestTimeout: Duration = .seconds(5),
        responseBytesMax: Int = 1 << 20, baseURL: String? = nil
    ) throws -> AppStoreServerAPIClient {
        let sender = RetryingSender(client: http, policy: policy, clock: retryClock, random: SeededRandomSource(seed: 7))
        let settings = AppStoreServerAPIClient.Settings(
            baseURLOverride: baseURL ?? fake.baseURL, requestTimeout: requestTimeout, responseBytesMax: responseBytesMax)
        return AppStoreServerAPIClient(
            key: try key ?? fake.apiKey(), sender: sender, settings: settings, currentTimeMilliseconds: wallClock.now)
    }

    func close() async {
        await http.close()
        fake.stop()
    }
}

/// Runs `body` with a fresh rig and closes it however `body` ends.
func withAPIRig<T>(_ body: (AppStoreAPIRig) async throws -> T) async throws -> T {
    let rig = try AppStoreAPIRig()
    do {
        let result = try await body(rig)
        await rig.close()
        return result
    } catch {
        await rig.close()
        throw error
    }
}

/// The API error `body` throws, or `nil` when it succeeds.
func apiError<T>(_ body: () async throws(AppStoreServerAPIError) -> T) async -> AppStoreServerAPIError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}
