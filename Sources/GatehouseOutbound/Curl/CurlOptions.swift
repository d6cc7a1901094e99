import CCurl
import GatehouseBase

/// Options set on an easy handle one after another, keeping the first that libcurl refuses as
/// the failure (the later ones are still tried, and ignored).
struct CurlOptions {
    let easy: UnsafeMutableRawPointer
    private(set) var failure: String?

    init(_ easy: UnsafeMutableRawPointer) {
        self.easy = easy
    }

    mutating func check(_ code: CURLcode, _ what: String) {
        if failure == nil, code != CURLE_OK { failure = "\(what): \(String(cString: curl_easy_strerror(code)))" }
    }

    /// What every transfer of the server sets alike: where libcurl writes a failure's detail, no
    /// signals (the transfer runs on a thread of ours), the URL and the schemes it may use, the
    /// certificate checks, and how long connecting and the whole transfer may take.
    mutating func setBasics(errorBuffer: CurlErrorBuffer, url: String, schemes: String, connectTimeout: Duration, timeout: Duration) {
        check(ccurl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer.pointer), "error buffer")
        check(ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "nosignal")
        check(ccurl_easy_setopt_string(easy, CURLOPT_URL, url), "url")
        check(ccurl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, schemes), "protocols")
        // libcurl's defaults, said again so that no later option can loosen them unseen.
        check(ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1), "verify peer")
        check(ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2), "verify host")
        check(ccurl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(connectTimeout)), "connect timeout")
        check(ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(timeout)), "timeout")
    }

    /// For libcurl's millisecond options, where 0 would mean no limit at all.
    private static func milliseconds(_ duration: Duration) -> Int {
        max(1, Int(clamping: duration.wholeMilliseconds))
    }
}

/// The buffer libcurl writes a failed transfer's detail into (CURLOPT_ERRORBUFFER). Its owner
/// frees it after cleaning up the easy handle that writes into it.
final class CurlErrorBuffer {
    let pointer: UnsafeMutablePointer<CChar>

    init() {
        let size = ccurl_error_size()
        pointer = .allocate(capacity: size)
        pointer.initialize(repeating: 0, count: size)
    }

    deinit {
        pointer.deallocate()
    }

    /// What libcurl wrote about the failure, or the generic text of `code` when it wrote nothing.
    func detail(for code: CURLcode) -> String {
        pointer.pointee == 0 ? String(cString: curl_easy_strerror(code)) : String(cString: pointer)
    }
}
