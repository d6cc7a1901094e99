/// Finds the route for a method and path. Patterns are literal segments and `{name}`
/// captures, e.g. `/v1/stores/app-store/{project}`; paths are matched segment by segment
/// after `HTTPPath.segments` has split and decoded them, so a trailing slash is a segment of
/// its own (`/healthz/` is not `/healthz`) and a capture never matches an empty segment.
///
/// A GET route also answers HEAD. Where several patterns match, the one with a literal at the
/// first segment where they differ wins (`/v1/subscribers/identify` over
/// `/v1/subscribers/{id}`), then a route for the method itself over a GET standing in for HEAD.
public struct HTTPRouter<Route: Sendable>: Sendable {
    private var entries: [Entry] = []

    private struct Entry: Sendable {
        var method: String
        var pattern: [PatternSegment]
        var route: Route
    }

    private enum PatternSegment: Sendable, Equatable {
        case literal(String)
        case capture(String)
    }

    public init() {}

    /// Adds a route; a pattern must start with "/", and a method and pattern pair may be added once.
    public mutating func add(_ method: String, _ pattern: String, _ route: Route) {
        precondition(pattern.hasPrefix("/"), "a route pattern starts with /: \(pattern)")
        let segments = pattern.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") && segment.count > 2
                ? PatternSegment.capture(String(segment.dropFirst().dropLast())) : .literal(String(segment))
        }
        precondition(!entries.contains { $0.method == method && $0.pattern == segments }, "route added twice: \(method) \(pattern)")
        entries.append(Entry(method: method, pattern: segments, route: route))
    }

    public func match(method: String, path: String) -> HTTPRouteMatch<Route> {
        guard let segments = HTTPPath.segments(path) else { return .badPath }
        var allowed: Set<String> = []
        var best: (entry: Entry, parameters: [String: String])?
        for entry in entries {
            guard let parameters = Self.bind(entry.pattern, to: segments) else { continue }
            allowed.insert(entry.method)
            if entry.method == "GET" { allowed.insert("HEAD") }
            guard entry.method == method || (method == "HEAD" && entry.method == "GET") else { continue }
            if best.map({ Self.isPreferred(entry, over: $0.entry, for: method) }) ?? true { best = (entry, parameters) }
        }
        if let best { return .found(best.entry.route, parameters: best.parameters) }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allow: allowed.sorted())
    }

    /// The captures of `pattern` in `segments`, or nil when it does not match them.
    private static func bind(_ pattern: [PatternSegment], to segments: [String]) -> [String: String]? {
        guard pattern.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (part, segment) in zip(pattern, segments) {
            switch part {
            case .literal(let literal) where literal == segment: continue
            case .capture(let name) where !segment.isEmpty: parameters[name] = segment
            default: return nil
            }
        }
        return parameters
    }

    private static func isPreferred(_ candidate: Entry, over current: Entry, for method: String) -> Bool {
        for (new, old) in zip(candidate.pattern, current.pattern) {
            switch (new, old) {
            case (.literal, .capture): return true
            case (.capture, .literal): return false
            default: continue
            }
        }
        return candidate.method == method && current.method != method
    }
}

public enum HTTPRouteMatch<Route> {
    case found(Route, parameters: [String: String])
    /// The path exists, not for this method: 405 with `Allow` (sorted, HEAD wherever GET is).
    case methodNotAllowed(allow: [String])
    case notFound
    /// The path does not decode (a bad escape, not UTF-8, no leading "/"): 400.
    case badPath
}

extension HTTPRouteMatch: Sendable where Route: Sendable {}
extension HTTPRouteMatch: Equatable where Route: Equatable {}
