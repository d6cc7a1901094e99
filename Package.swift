// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "gatehouse",
    products: [
        .executable(name: "gatehouse", targets: ["gatehouse"]),
        .executable(name: "gatehouse-bench", targets: ["GatehouseBench"]),
    ],
    targets: [
        // MARK: C system libraries and shims
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .yum(["openssl-devel"]), .brew(["openssl@3"])]
        ),
        .target(name: "CGatehouseLinux", cSettings: [.define("_GNU_SOURCE")]),
        .systemLibrary(
            name: "CHTTPParser",
            providers: [.apt(["libhttp-parser-dev"]), .yum(["http-parser-devel"]), .brew(["http-parser"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .yum(["zlib-devel"]), .brew(["zlib"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .yum(["libcurl-devel"]), .brew(["curl"])]
        ),

        // MARK: Libraries, bottom up
        // libm: Swift's floating-point rounding calls into it, and nothing else pulls it in.
        .target(name: "GatehouseBase", dependencies: ["COpenSSL", "CGatehouseLinux"], linkerSettings: [.linkedLibrary("m")]),
        .target(name: "GatehouseCore", dependencies: ["GatehouseBase", "CGatehouseLinux"]),
        .target(name: "GatehouseWire", dependencies: ["GatehouseCore", "GatehouseBase"]),
        .target(name: "GatehousePosix", dependencies: ["GatehouseBase", "CGatehouseLinux"]),
        .target(name: "GatehouseHTTP", dependencies: ["GatehouseBase", "CHTTPParser"]),
        .target(name: "GatehouseStorage", dependencies: ["GatehouseBase", "CZlib", "CGatehouseLinux"]),
        .target(name: "GatehouseAppStore", dependencies: ["GatehouseCore", "GatehouseWire", "GatehouseBase", "COpenSSL"]),
        .target(name: "GatehouseStripe", dependencies: ["GatehouseCore", "GatehouseWire", "GatehouseBase"]),
        .target(name: "GatehouseRuntime", dependencies: ["GatehouseCore", "GatehouseStorage", "GatehouseBase"]),
        .target(
            name: "GatehouseOutbound",
            dependencies: ["GatehouseAppStore", "GatehouseHTTP", "GatehouseWire", "GatehouseCore", "GatehouseBase", "CCurl"]
        ),
        .target(
            name: "GatehouseServer",
            dependencies: [
                "GatehouseRuntime", "GatehouseStorage", "GatehouseWire", "GatehousePosix", "GatehouseHTTP", "GatehouseAppStore",
                "GatehouseOutbound", "GatehouseStripe", "GatehouseCore", "GatehouseBase",
            ]
        ),

        // MARK: Executables
        .executableTarget(name: "gatehouse", dependencies: ["GatehouseServer", "GatehouseBase"]),
        .executableTarget(
            name: "GatehouseBench",
            dependencies: [
                "GatehouseServer", "GatehouseRuntime", "GatehouseStorage", "GatehouseHTTP", "GatehouseWire", "GatehouseCore",
                "GatehousePosix", "GatehouseBase",
            ],
            path: "Benchmarks/GatehouseBench"
        ),

        // MARK: Test support and tests
        .target(name: "CGatehouseTestRun"),
        .target(
            name: "GatehouseTesting",
            dependencies: [
                "GatehouseServer", "GatehouseOutbound", "GatehouseAppStore", "GatehouseStripe", "GatehouseWire", "GatehousePosix",
                "GatehouseHTTP", "GatehouseStorage", "GatehouseBase", "COpenSSL", "CGatehouseLinux", "CGatehouseTestRun",
            ]
        ),
        .testTarget(name: "GatehouseBaseTests", dependencies: ["GatehouseBase", "GatehouseTesting"]),
        .testTarget(name: "GatehouseCoreTests", dependencies: ["GatehouseCore"]),
        .testTarget(
            name: "GatehouseRuntimeTests",
            dependencies: ["GatehouseRuntime", "GatehouseTesting", "GatehouseStorage", "GatehouseCore", "GatehouseBase"]
        ),
        .testTarget(name: "GatehouseHTTPTests", dependencies: ["GatehouseHTTP", "GatehouseBase"]),
        .testTarget(name: "GatehouseWireTests", dependencies: ["GatehouseWire", "GatehouseCore", "GatehouseBase"]),
        .testTarget(name: "GatehouseAppStoreTests", dependencies: ["GatehouseAppStore", "GatehouseWire", "GatehouseBase"]),
        .testTarget(
            name: "GatehouseStripeTests",
            dependencies: [
                "GatehouseStripe", "GatehouseTesting", "GatehouseOutbound", "GatehouseHTTP", "GatehouseWire", "GatehouseCore",
                "GatehouseBase",
            ],
            exclude: ["Vectors"]
        ),
        .testTarget(
            name: "GatehouseOutboundTests",
            dependencies: [
                "GatehouseOutbound", "GatehouseTesting", "GatehouseAppStore", "GatehouseHTTP", "GatehousePosix", "GatehouseWire",
                "GatehouseBase",
            ]
        ),
        .testTarget(
            name: "GatehouseServerTests",
            dependencies: [
                "GatehouseServer", "GatehouseTesting", "GatehouseRuntime", "GatehouseStorage", "GatehouseWire", "GatehouseHTTP",
                "GatehouseAppStore", "GatehouseOutbound", "GatehouseStripe", "GatehouseCore", "GatehouseBase",
            ]
        ),
        .testTarget(
            name: "GatehouseStorageTests",
            dependencies: ["GatehouseStorage", "GatehouseTesting", "GatehouseBase"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["GatehouseTesting", "GatehouseWire", "GatehousePosix", "GatehouseHTTP", "gatehouse"]
        ),
    ]
)

// One settings block for every Swift target (the swift-log / swift-nio pattern).
for target in package.targets where [.regular, .executable, .test].contains(target.type) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
