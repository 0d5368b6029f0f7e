// swift-tools-version:6.1
// The feature protocols the example host defines and plug-ins implement. A package of its own so that its
// dynamic library product is linked dynamically by both the host and the plug-in .so (one copy of each type).
import PackageDescription

let package = Package(
    name: "ExampleFeatures",
    platforms: [.macOS(.v15)],
    products: [.library(name: "ExampleFeatures", type: .dynamic, targets: ["ExampleFeatures"])],
    targets: [
        .target(
            name: "ExampleFeatures",
            // The root package's settings (see ../Package.swift).
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ])
    ]
)
