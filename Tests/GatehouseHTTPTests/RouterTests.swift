import GatehouseHTTP
import Testing

@Suite struct RouterMatchesMethodAndPath {
    static let router: HTTPRouter<String> = {
        var router = HTTPRouter<String>()
        router.add("GET", "/healthz", "health")
        router.add("POST", "/v1/op", "op")
        router.add("POST", "/v1/stores/app-store/{project}", "app-store")
        router.add("GET", "/v1/subscribers/{id}", "subscriber")
        router.add("DELETE", "/v1/subscribers/{id}", "delete")
        router.add("POST", "/v1/subscribers/identify", "identify")
        router.add("GET", "/v1/subscribers/{id}/offerings", "offerings")
        router.add("POST", "/v1/subscribers/{id}/entitlements/{entitlement}/promotional", "grant")
        router.add("GET", "/", "root")
        return router
    }()

    private func match(_ method: String, _ path: String) -> HTTPRouteMatch<String> {
        Self.router.match(method: method, path: path)
    }

    @Test func literalPaths() {
        #expect(match("GET", "/healthz") == .found("health", parameters: [:]))
        #expect(match("POST", "/v1/op") == .found("op", parameters: [:]))
        #expect(match("GET", "/") == .found("root", parameters: [:]))
    }

    @Test func capturesAreDecodedAndKeepAnEscapedSlash() {
        #expect(match("POST", "/v1/stores/app-store/my%2Fproject") == .found("app-store", parameters: ["project": "my/project"]))
        #expect(
            match("POST", "/v1/subscribers/user%20one/entitlements/pro/promotional")
                == .found("grant", parameters: ["id": "user one", "entitlement": "pro"])
        )
        #expect(match("GET", "/v1/subscribers/caf%C3%A9") == .found("subscriber", parameters: ["id": "café"]))
        #expect(match("GET", "/v1/subscribers/a+b") == .found("subscriber", parameters: ["id": "a+b"]))
    }

    @Test func anInstallIdReadsTheSameEscapedOrNot() {
        let expected = HTTPRouteMatch.found("subscriber", parameters: ["id": "$RCAnonymousID:abc"])
        #expect(match("GET", "/v1/subscribers/$RCAnonymousID:abc") == expected)
        #expect(match("GET", "/v1/subscribers/%24RCAnonymousID%3Aabc") == expected)
        #expect(match("GET", "/v1/subscribers/%24RCAnonymousID%3aabc") == expected)
    }

    @Test func aLiteralSegmentWinsOverACapture() {
        #expect(match("POST", "/v1/subscribers/identify") == .found("identify", parameters: [:]))
        #expect(match("GET", "/v1/subscribers/identify") == .found("subscriber", parameters: ["id": "identify"]))
    }

    @Test func aPathWithOtherMethodsIs405WithASortedAllow() {
        #expect(match("POST", "/healthz") == .methodNotAllowed(allow: ["GET", "HEAD"]))
        #expect(match("PUT", "/v1/subscribers/x") == .methodNotAllowed(allow: ["DELETE", "GET", "HEAD"]))
        #expect(match("GET", "/v1/op") == .methodNotAllowed(allow: ["POST"]))
        #expect(match("DELETE", "/v1/subscribers/identify") == .found("delete", parameters: ["id": "identify"]))
        #expect(match("PUT", "/v1/subscribers/identify") == .methodNotAllowed(allow: ["DELETE", "GET", "HEAD", "POST"]))
    }

    @Test func headAnswersOnAGetRoute() {
        #expect(match("HEAD", "/healthz") == .found("health", parameters: [:]))
        #expect(match("HEAD", "/v1/op") == .methodNotAllowed(allow: ["POST"]))
    }

    @Test func anOwnHeadRouteWinsOverGet() {
        var router = HTTPRouter<String>()
        router.add("GET", "/x", "get")
        router.add("HEAD", "/x", "head")
        #expect(router.match(method: "HEAD", path: "/x") == .found("head", parameters: [:]))
        #expect(router.match(method: "POST", path: "/x") == .methodNotAllowed(allow: ["GET", "HEAD"]))
    }

    @Test(arguments: ["/healthz/", "/health", "/v1/subscribers/", "/v1/subscribers//offerings", "//healthz", "/v1/op/extra", "/nowhere"])
    func otherPathsAreNotFound(path: String) {
        #expect(match("GET", path) == .notFound)
    }

    @Test(arguments: ["/v1/subscribers/%", "/v1/subscribers/%2", "/v1/subscribers/%zz", "/v1/subscribers/%FF", "/v1/subscribers/%C3", "*", "healthz", ""])
    func undecodablePathsAreBad(path: String) {
        #expect(match("GET", path) == .badPath)
    }

    @Test func segmentsSplitBeforeDecoding() {
        #expect(HTTPPath.segments("/a/b%2Fc/") == ["a", "b/c", ""])
        #expect(HTTPPath.segments("/") == [""])
        #expect(HTTPPath.segments("/%41%62") == ["Ab"])
        #expect(HTTPPath.segments("/a%") == nil)
    }
}
