// swift-tools-version: 6.1
import PackageDescription

/// Settings every Swift target shares (STYLE.md habit 9: one place for settings).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Fenceline",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Fenceline", targets: ["Fenceline"]),
        .library(name: "FencelineFormats", targets: ["FencelineFormats"]),
        .library(name: "FencelineRun", targets: ["FencelineRun"]),
        .library(name: "FencelineRender", targets: ["FencelineRender"]),
        .executable(name: "fenceline", targets: ["fenceline"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CGEOS",
            pkgConfig: "geos",
            providers: [.apt(["libgeos-dev"])]
        ),
        // ISA-L's inflate: gzip inputs are inflated on a thread beside the engines, which share the
        // cores with it, and ISA-L inflates them about four times as fast as zlib.
        .systemLibrary(
            name: "CIsal",
            pkgConfig: "libisal",
            providers: [.apt(["libisal-dev"])]
        ),
        .systemLibrary(name: "CMalloc"),
        .systemLibrary(name: "CPrefetch"),
        .target(name: "GEOSBridge", dependencies: ["CGEOS"]),
        .target(
            name: "Fenceline",
            dependencies: [
                "GEOSBridge",
                "CPrefetch",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Codecs only: readings, catalogs, JSON, event encodings and their errors.
        .target(name: "FencelineFormats", dependencies: ["Fenceline"]),
        // The run driver: input sources (files, pipes, live input, gzip), one engine or shards.
        .target(
            name: "FencelineRun",
            dependencies: [
                "Fenceline", "FencelineFormats", "CIsal", "CMalloc", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `fenceline serve`: the engine behind HTTP, with its state in SQLite (SPEC §11).
        .target(
            name: "FencelineService",
            dependencies: [
                "Fenceline", "FencelineFormats", "FencelineRun",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Served from the binary itself (/openapi.yaml, the live map at /), so they always match it.
            resources: [.embedInCode("openapi.yaml"), .embedInCode("map.html")]
        ),
        // Pictures and explanations of a run.
        .target(name: "FencelineRender", dependencies: ["Fenceline", "FencelineFormats"]),
        .executableTarget(
            name: "fenceline",
            dependencies: [
                "Fenceline",
                "FencelineFormats",
                "FencelineRun",
                "FencelineRender",
                "FencelineService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "fenceline-bench",
            dependencies: [
                "Fenceline",
                "FencelineFormats",
                "FencelineRun",
                "GEOSBridge",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tools/Bench"
        ),
        // libFuzzer targets on the codecs, one per parser; Tools/fuzz builds them with
        // -sanitize=fuzzer,address -D FUZZING, and a plain build replays inputs.
        .executableTarget(
            name: "fenceline-fuzz",
            dependencies: ["Fenceline", "FencelineFormats", "FencelineRun"],
            path: "Sources/FencelineFuzz"
        ),
        .target(
            name: "TestSupport",
            dependencies: ["Fenceline", "FencelineFormats", "FencelineRun"],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "GEOSBridgeTests", dependencies: ["GEOSBridge"]),
        .testTarget(name: "FencelineTests", dependencies: ["Fenceline", "GEOSBridge", "TestSupport"]),
        .testTarget(name: "FencelineFormatsTests", dependencies: ["FencelineFormats", "TestSupport"]),
        .testTarget(name: "FencelineRunTests", dependencies: ["FencelineRun", "FencelineFormats", "TestSupport"]),
        .testTarget(
            name: "FencelineRenderTests",
            dependencies: ["FencelineRender", "FencelineRun", "FencelineFormats", "TestSupport"]
        ),
        .testTarget(
            name: "FencelineServiceTests",
            dependencies: [
                "FencelineService", "Fenceline", "TestSupport", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .testTarget(name: "FencelineCLITests", dependencies: ["TestSupport"]),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
