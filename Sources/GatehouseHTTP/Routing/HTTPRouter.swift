/// Finds the route for a method and path. Patterns are literal segments and `{name}`
/// captures, e.g. `/v1/stores/app-store/{project}`; paths are matched segment by segment
/// after `HTTPPath.segments` has split and decoded them, so a trailing slash is a segment of
/// its own (`/healthz/` is not `/healthz`) and a capture never matches an empty segment.
///
/// A GET route also answers HEAD. Where several patterns match, the one with a literal at the
/// first segment where they differ wins (`/v1/subscribers/identify` over
/// `/v1/subscribers/{id}`), then a route for the method itself over a GET standing in for HEAD.
public struct HTTPRouter<Route: Sendable>: Sendable {
    /// The patterns, matched without generics (a generic router's code runs unspecialized in
    /// the module that uses it, paying a metadata lookup at every step); `routes` is parallel.
    private var table = RouteTable()
    private var routes: [Route] = []

    public init() {}

    /// Adds a route; a pattern must start with "/", and a method and pattern pair may be added once.
    public mutating func add(_ method: String, _ pattern: String, _ route: Route) {
        table.add(method, pattern)
        routes.append(route)
    }

    public func match(method: String, path: String) -> HTTPRouteMatch<Route> {
        switch table.match(method: method, path: path) {
        case .found(let index, let parameters): .found(routes[index], parameters: parameters)
        case .methodNotAllowed(let allow): .methodNotAllowed(allow: allow)
        case .notFound: .notFound
        case .badPath: .badPath
        }
    }
}

/// ``HTTPRouter``'s patterns, found by index.
struct RouteTable: Sendable {
    private var entries: [Entry] = []

    private struct Entry: Sendable {
        var method: String
        var pattern: [PatternSegment]
        var hasCaptures: Bool
    }

    private enum PatternSegment: Sendable, Equatable {
        case literal(String)
        case capture(String)
    }

    mutating func add(_ method: String, _ pattern: String) {
        precondition(pattern.hasPrefix("/"), "a route pattern starts with /: \(pattern)")
        let segments = pattern.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") && segment.count > 2
                ? PatternSegment.capture(String(segment.dropFirst().dropLast())) : .literal(String(segment))
        }
        precondition(!entries.contains { $0.method == method && $0.pattern == segments }, "route added twice: \(method) \(pattern)")
        let hasCaptures = segments.contains { if case .capture = $0 { true } else { false } }
        entries.append(Entry(method: method, pattern: segments, hasCaptures: hasCaptures))
    }

    func match(method: String, path: String) -> HTTPRouteMatch<Int> {
        guard let segments = HTTPPath.segments(path) else { return .badPath }
        var best: Int?
        for (index, entry) in entries.enumerated() where Self.matches(entry.pattern, segments) {
            guard entry.method == method || (method == "HEAD" && entry.method == "GET") else { continue }
            if best.map({ Self.isPreferred(entry, over: entries[$0], for: method) }) ?? true { best = index }
        }
        if let best {
            return .found(best, parameters: entries[best].hasCaptures ? Self.captures(entries[best].pattern, segments) : [:])
        }
        // Only a path without a route for this method pays for the list of those it has.
        var allowed: Set<String> = []
        for entry in entries where Self.matches(entry.pattern, segments) {
            allowed.insert(entry.method)
            if entry.method == "GET" { allowed.insert("HEAD") }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allow: allowed.sorted())
    }

    /// Whether `pattern` matches `segments`: each literal equal, each capture non-empty.
    private static func matches(_ pattern: [PatternSegment], _ segments: [String]) -> Bool {
        guard pattern.count == segments.count else { return false }
        for index in pattern.indices {
            switch pattern[index] {
            case .literal(let literal): if literal != segments[index] { return false }
            case .capture: if segments[index].isEmpty { return false }
            }
        }
        return true
    }

    private static func captures(_ pattern: [PatternSegment], _ segments: [String]) -> [String: String] {
        var parameters: [String: String] = [:]
        for index in pattern.indices {
            if case .capture(let name) = pattern[index] { parameters[name] = segments[index] }
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
