// swift-tools-version:6.1
// Example host and plug-ins for Plugboard, and the tests that load a plug-in from a shared library.
//
// A package of its own (see Tools/README.md): a dynamic library product is linked dynamically only by targets
// of *another* package, and a host that loads Swift plug-ins must share one copy of PlugboardPluginAPI with them.
import PackageDescription

// The root package's settings, so that code copied from here builds in a host that uses them: an import is internal
// unless it says `public import`, and a member is visible only in files that import its module.
let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "PlugboardExamples",
    platforms: [.macOS(.v15)],
    products: [
        // Built as libGreeterPlugin.so and registered on the board with --artifact.
        .library(name: "GreeterPlugin", type: .dynamic, targets: ["GreeterPlugin"]),
        .executable(name: "example-host", targets: ["ExampleHost"]),
    ],
    dependencies: [
        .package(name: "Plugboard", path: ".."),
        .package(name: "ExampleFeatures", path: "Features"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
    ],
    targets: [
        .target(
            name: "GreeterPlugin",
            dependencies: [
                .product(name: "PlugboardPluginAPI", package: "Plugboard"),
                .product(name: "ExampleFeatures", package: "ExampleFeatures"),
                // `context.logger` is swift-log's `Logger`: its methods are visible only where Logging is imported.
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings
        ),
        .target(
            name: "NotesPlugin",
            dependencies: [
                .product(name: "PlugboardPluginAPI", package: "Plugboard"),
                .product(name: "ExampleFeatures", package: "ExampleFeatures"),
                // `context.logger` is swift-log's `Logger`: its methods are visible only where Logging is imported.
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings
        ),
        .executableTarget(
            name: "ExampleHost",
            dependencies: [
                "NotesPlugin",
                .product(name: "PlugboardHost", package: "Plugboard"),
                .product(name: "PlugboardFileHost", package: "Plugboard"),
                .product(name: "PlugboardRemoteHost", package: "Plugboard"),
                .product(name: "PlugboardModel", package: "Plugboard"),
                .product(name: "PlugboardPluginAPI", package: "Plugboard"),
                .product(name: "ExampleFeatures", package: "ExampleFeatures"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings
        ),
        .testTarget(
            name: "ExampleHostTests",
            dependencies: [
                "NotesPlugin",
                .product(name: "PlugboardHost", package: "Plugboard"),
                .product(name: "PlugboardFileHost", package: "Plugboard"),
                .product(name: "PlugboardPluginAPI", package: "Plugboard"),
                .product(name: "PlugboardModel", package: "Plugboard"),
                .product(name: "PlugboardOperations", package: "Plugboard"),
                .product(name: "PlugboardTesting", package: "Plugboard"),
                .product(name: "PlugboardVersioning", package: "Plugboard"),
                .product(name: "ExampleFeatures", package: "ExampleFeatures"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: settings
        ),
    ]
)
