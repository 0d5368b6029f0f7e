// swift-tools-version:6.1
// Plugboard — an embedded plug-in registry and feature-flag store backed by SQLite.

import CompilerPluginSupport
import PackageDescription

/// Settings every target gets: Swift 6 language mode (strict concurrency) plus upcoming features.
let commonSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // An import is internal unless it says `public import`: a module's dependencies stay out of its interface unless a
    // public signature needs them (GRDB never does).
    .enableUpcomingFeature("InternalImportsByDefault"),
    // A member is visible only in files that import its module.
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Plugboard",
    platforms: [.macOS(.v15)],
    products: [
        // The one module a plug-in links. Dynamic, so that a host and its plug-ins share one copy of every type.
        .library(name: "PlugboardPluginAPI", type: .dynamic, targets: ["PlugboardPluginAPI"]),
        .library(name: "PlugboardVersioning", targets: ["PlugboardVersioning"]),
        .library(name: "PlugboardFlags", targets: ["PlugboardFlags"]),
        .library(name: "PlugboardModel", targets: ["PlugboardModel"]),
        .library(name: "PlugboardSecureStorage", targets: ["PlugboardSecureStorage"]),
        .library(name: "PlugboardIdentity", targets: ["PlugboardIdentity"]),
        .library(name: "PlugboardBoardSecureStorage", targets: ["PlugboardBoardSecureStorage"]),
        .library(name: "PlugboardHost", targets: ["PlugboardHost"]),
        .library(name: "PlugboardFileHost", targets: ["PlugboardFileHost"]),
        .library(name: "PlugboardRemoteHost", targets: ["PlugboardRemoteHost"]),
        .library(name: "PlugboardTesting", targets: ["PlugboardTesting"]),
        .library(name: "PlugboardOperations", targets: ["PlugboardOperations"]),
        .library(name: "PlugboardServer", targets: ["PlugboardServer"]),
        .executable(name: "plugboard", targets: ["plugboard"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
    ],
    targets: [
        // Layers, lowest first: a target depends only on targets of lower layers (and on what it imports).

        // MARK: Layer 0, pure values (no I/O): versions, the regex engine, the flags evaluator
        .target(name: "PlugboardVersioning"),
        // A linear-time regular expression engine with the syntax and semantics of Rust's regex crate.
        .target(name: "PlugboardRegex"),
        // The evaluator names OpenFeature's reasons and error codes itself: it links no plug-in API.
        .target(name: "PlugboardFlags", dependencies: ["PlugboardRegex", "PlugboardVersioning"]),

        // MARK: Layer 1, the plug-in interface (SPI + FPI): what a plug-in links
        .target(
            name: "PlugboardPluginAPI",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),

        // MARK: Layer 2, values and engines without a board: shared values (no SQLite), secure storage over a backend
        // The model links no plug-in ABI: the board's error codes are its own (`BoardError.Code`).
        .target(
            name: "PlugboardModel",
            dependencies: [
                "PlugboardFlags",
                "PlugboardRegex",
                "PlugboardVersioning",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Envelope encryption, key providers, and the protocol of where ciphertext lives (`SecureStorageBackend`),
        // which the board implements: it links no board.
        .target(
            name: "PlugboardSecureStorage",
            dependencies: ["PlugboardPluginAPI", .product(name: "Crypto", package: "swift-crypto")]
        ),

        // Addresses of outward calls: IP addresses classified (loopback, private, link-local, …), and the URL policy of
        // webhook endpoints. No HTTP client: the operations check URLs with it.
        .target(name: "PlugboardNetwork", dependencies: ["PlugboardModel"]),

        // OpenID Connect, the client side: discovery, the code flow with PKCE, ID tokens checked (jwt-kit for the
        // signatures, everything else ours). A client of the network and no board: its one way out is `OutboundHTTP`
        // (AsyncHTTPClient with timeouts, a body limit, no redirects and no private addresses).
        .target(
            name: "PlugboardIdentity",
            dependencies: [
                "PlugboardNetwork",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Layer 3, the board: the SQLite file (the only GRDB), and its secure storage
        .target(
            name: "PlugboardMigrations",
            path: "Migrations",
            exclude: ["README.md"],
            plugins: [.plugin(name: "EmbedPlugin")]
        ),
        .target(
            name: "PlugboardStore",
            dependencies: [
                "PlugboardMigrations",
                "PlugboardModel",
                "PlugboardSecureStorage",
                "PlugboardFlags",
                "PlugboardVersioning",
                "PlugboardPluginAPI",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The board's secure storage (`BoardSecureStorage`): the engine over the board's secret tables, audited.
        .target(
            name: "PlugboardBoardSecureStorage",
            dependencies: ["PlugboardStore", "PlugboardSecureStorage", "PlugboardModel", "PlugboardPluginAPI"]
        ),

        // MARK: Layer 4, hosts: the runtime, a host of the board file, the HTTP clients of a served board and its hosts
        .target(
            name: "PlugboardHost",
            dependencies: [
                "PlugboardPluginAPI",
                "PlugboardModel",
                "PlugboardFlags",
                "PlugboardVersioning",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A host of the board file on its machine: the host runtime with the board, its flags and secure storage.
        .target(
            name: "PlugboardFileHost",
            dependencies: [
                "PlugboardHost",
                "PlugboardStore",
                "PlugboardSecureStorage",
                "PlugboardBoardSecureStorage",
                "PlugboardModel",
                "PlugboardPluginAPI",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // One HTTP configuration (trust, waits, failure sentences) for the CLI's `--server` client and served hosts.
        .target(
            name: "PlugboardClient",
            dependencies: [
                "PlugboardModel",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Hosts on other machines: the host runtime against a served board (HTTP client, offline cache); no GRDB.
        .target(
            name: "PlugboardRemoteHost",
            dependencies: [
                "PlugboardHost",
                "PlugboardClient",
                "PlugboardModel",
                "PlugboardFlags",
                "PlugboardPluginAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Fakes for plug-in authors' tests.
        .target(
            name: "PlugboardTesting",
            dependencies: ["PlugboardPluginAPI", .product(name: "Logging", package: "swift-log")]
        ),

        // Webhooks: the audit log's rows sent to endpoints, signed (Standard Webhooks), with retries; its one way out is
        // PlugboardIdentity's `OutboundHTTP` (timeouts, a size limit, no redirects, addresses checked before connecting).
        .target(
            name: "PlugboardEvents",
            dependencies: [
                "PlugboardStore", "PlugboardModel", "PlugboardIdentity", "PlugboardNetwork", "PlugboardBoardSecureStorage",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // MARK: Layer 4, the operations API's operations: performed on a board by the CLI, or served by `serve --admin`
        .target(
            name: "PlugboardOperations",
            dependencies: [
                "PlugboardNetwork",
                "PlugboardStore",
                "PlugboardSecureStorage",
                "PlugboardBoardSecureStorage",
                "PlugboardModel",
                "PlugboardFlags",
                "PlugboardVersioning",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // MARK: Layer 5, the server: the board over HTTP (Unleash client API, OFREP, hosts, the operations API)
        // Its one outward request is to a pub/sub relay (`--relay-publish`): AsyncHTTPClient, with a timeout and a size
        // limit on every answer. It links no `PlugboardClient`: that is the CLI's and the hosts' configuration.
        .target(
            name: "PlugboardServer",
            dependencies: [
                "PlugboardEvents",
                "PlugboardBoardSecureStorage",
                "PlugboardIdentity",
                "PlugboardOperations",
                "PlugboardStore",
                "PlugboardModel",
                "PlugboardFlags",
                "PlugboardPluginAPI",
                "PlugboardVersioning",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // The relay publisher's client.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                // The console's pages: logic-less templates, compiled into the binary.
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            // Console/Templates/*.mustache, compiled into the binary.
            plugins: [.plugin(name: "EmbedPlugin")]
        ),

        // MARK: Layer 6, the CLI: `plugboard`, on a board file or through `--server`
        .executableTarget(
            name: "plugboard",
            dependencies: [
                "PlugboardEvents",
                "PlugboardIdentity",
                "PlugboardOperations",
                "PlugboardClient",
                "PlugboardServer",
                "PlugboardStore",
                "PlugboardSecureStorage",
                "PlugboardBoardSecureStorage",
                "PlugboardModel",
                "PlugboardFlags",
                "PlugboardVersioning",
                "PlugboardPluginAPI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The binary holds the Swift runtime and Foundation: a short command (`--help`, `kill`, `flag evaluate`
            // in a script's loop) then starts without the dynamic loader resolving them, about 4 ms of a 10 ms start
            // in a release build and a sixth of a short command's CPU in a debug build. Debug builds are linked the
            // same way, so the tests run the CLI as it ships; no test target may therefore link this module (the
            // test bundle would hold a second runtime): the tests run the binary, which `swift test` builds with
            // every other product. The CLI never loads a Swift plug-in, so one copy of the runtime is all there is;
            // a host must not be linked this way (its plug-ins would bring a second one).
            // The static Foundation's own libraries are named here: SwiftPM compiled the modules against the shared
            // ones, whose link entries name no ICU or CoreFoundation.
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCShims", "-l_FoundationCollections",
                    ], .when(platforms: [.linux]))
            ]
        ),

        // MARK: Build tooling: Migrations/*.sql and the console's *.mustache compiled into the binaries
        .executableTarget(name: "EmbedCodegen", path: "Tools/BuildPlugins/EmbedCodegen"),
        .plugin(
            name: "EmbedPlugin",
            capability: .buildTool(),
            dependencies: ["EmbedCodegen"],
            path: "Tools/BuildPlugins/EmbedPlugin"
        ),

        // MARK: Tests
        // What several test targets share: the CLI harness, child processes, a safe reader of board files, and the
        // board file as the sqlite3 tool reads and edits it (no GRDB: outside the store's own tests, nothing opens the
        // file but the code under test and sqlite3).
        .target(
            name: "PlugboardTestSupport",
            path: "Tests/PlugboardTestSupport"
        ),
        // A host process for the tests that cross processes (registry, flags and secure storage embedded).
        .executableTarget(
            name: "plugboard-test-host",
            dependencies: [
                "PlugboardHost", "PlugboardFileHost", "PlugboardRemoteHost", "PlugboardModel", "PlugboardStore", "PlugboardSecureStorage",
                "PlugboardBoardSecureStorage", "PlugboardPluginAPI",
            ],
            path: "Tests/PlugboardTestHost"
        ),
        .testTarget(
            name: "PlugboardProcessTests",
            dependencies: [
                "plugboard-test-host", "PlugboardTestSupport", "PlugboardModel", "PlugboardStore",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(name: "PlugboardVersioningTests", dependencies: ["PlugboardVersioning", "PlugboardTestSupport"]),
        .testTarget(
            name: "PlugboardEventsTests",
            dependencies: [
                "PlugboardEvents", "PlugboardIdentity", "PlugboardNetwork", "PlugboardModel", "PlugboardTestSupport",
                "PlugboardStore", "PlugboardBoardSecureStorage", "PlugboardSecureStorage",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "PlugboardIdentityTests",
            dependencies: [
                "PlugboardNetwork", "PlugboardIdentity", "PlugboardTestSupport",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "PlugboardOperationsTests",
            dependencies: [
                "PlugboardOperations", "PlugboardStore", "PlugboardModel", "PlugboardVersioning", "PlugboardTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .testTarget(name: "PlugboardRegexTests", dependencies: ["PlugboardRegex", "PlugboardTestSupport"]),
        .testTarget(name: "PlugboardFlagsTests", dependencies: ["PlugboardFlags", "PlugboardTestSupport"], exclude: ["Fixtures"]),
        .testTarget(
            name: "PlugboardStoreTests",
            dependencies: [
                "PlugboardStore", "PlugboardModel", "PlugboardMigrations", "PlugboardFlags", "PlugboardVersioning", "PlugboardTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "PlugboardHostTests",
            dependencies: [
                "PlugboardHost", "PlugboardFileHost", "PlugboardModel", "PlugboardStore", "PlugboardFlags", "PlugboardVersioning",
                "PlugboardPluginAPI", "PlugboardTesting", "PlugboardServer", "PlugboardRemoteHost", "PlugboardClient",
                "PlugboardTestSupport",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "PlugboardCLITests",
            dependencies: ["PlugboardTestSupport"]
        ),
        .testTarget(
            name: "PlugboardServerTests",
            dependencies: [
                "PlugboardServer", "PlugboardOperations", "PlugboardStore", "PlugboardModel", "PlugboardFlags",
                "PlugboardTestSupport", "PlugboardVersioning",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "PlugboardSecureStorageTests",
            dependencies: [
                "PlugboardSecureStorage", "PlugboardBoardSecureStorage", "PlugboardTesting", "PlugboardPluginAPI", "PlugboardStore",
                "PlugboardModel", "PlugboardTestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ]
)

for target in package.targets where target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + commonSwiftSettings
}

// MARK: Benchmarks and the peer comparison (opt-in)
//
// ordo-one/benchmark is declared only when PLUGBOARD_BENCHMARKS=1, so an ordinary `swift build` or `swift test`
// never resolves, fetches or builds it. Run them with
//   PLUGBOARD_BENCHMARKS=1 swift package --allow-writing-to-package-directory benchmark
// (see Tools/Benchmarks/README.md). PLUGBOARD_COMPARE_PEER=1 declares the `compare-peer` executable that
// Tools/Benchmarks/compare-peer builds (Unleash's engine against ours, from native code); it needs no other package.
let benchmarks = Context.environment["PLUGBOARD_BENCHMARKS"] == "1"
let comparePeer = Context.environment["PLUGBOARD_COMPARE_PEER"] == "1"
// PLUGBOARD_SERVE_PEER=1 declares `serve-bare`, the bare Hummingbird route Tools/Benchmarks/serve/run.sh measures
// `plugboard serve` against.
if Context.environment["PLUGBOARD_SERVE_PEER"] == "1" {
    package.products.append(.executable(name: "serve-bare", targets: ["serve-bare"]))
    package.targets.append(
        .executableTarget(
            name: "serve-bare",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log")],
            path: "Tools/Benchmarks/ServeBare",
            swiftSettings: commonSwiftSettings
        ))
}
if benchmarks || comparePeer {
    // The features file and seeded contexts both measure.
    package.targets.append(
        .target(
            name: "BenchmarkContexts",
            dependencies: ["PlugboardFlags"],
            path: "Tools/Benchmarks/BenchmarkContexts",
            swiftSettings: commonSwiftSettings
        ))
}
if comparePeer {
    package.products.append(.executable(name: "compare-peer", targets: ["compare-peer"]))
    package.targets.append(
        .executableTarget(
            name: "compare-peer",
            dependencies: ["PlugboardFlags", "BenchmarkContexts"],
            path: "Tools/Benchmarks/ComparePeer",
            swiftSettings: commonSwiftSettings
        ))
}
if benchmarks {
    // The board of Tools/Benchmarks/audit-scale: 10,000 plug-ins and a million audit rows.
    package.targets.append(
        .executableTarget(
            name: "audit-scale-board",
            dependencies: [
                "BenchmarkContexts", "PlugboardModel", "PlugboardStore", "PlugboardSecureStorage", "PlugboardBoardSecureStorage",
            ],
            path: "Tools/Benchmarks/AuditScale",
            swiftSettings: commonSwiftSettings
        ))
    // The MallocInterposer trait only: the default traits need a package this project does not use.
    package.dependencies.append(.package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]))
    package.targets.append(
        .executableTarget(
            name: "PlugboardBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkContexts",
                "PlugboardFlags",
                "PlugboardModel",
                "PlugboardStore",
                "PlugboardHost",
                "PlugboardFileHost",
                "PlugboardPluginAPI",
                "PlugboardSecureStorage",
                "PlugboardBoardSecureStorage",
                "PlugboardVersioning",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tools/Benchmarks/PlugboardBenchmarks",
            swiftSettings: commonSwiftSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ))
}
