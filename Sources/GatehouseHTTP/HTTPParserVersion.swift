internal import CHTTPParser

/// The version of Node's `http_parser` the server was linked with, for `gatehouse --version`
/// and the build-info metric.
public enum HTTPParserVersion {
    public static var current: String {
        let packed = http_parser_version()
        return "\((packed >> 16) & 255).\((packed >> 8) & 255).\(packed & 255)"
    }
}
