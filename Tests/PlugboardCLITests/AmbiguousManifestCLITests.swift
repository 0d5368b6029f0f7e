import Foundation
import PlugboardTestSupport
import Testing

/// Ambiguous manifests: duplicate JSON keys are refused, and versions that differ only in build
/// metadata are one version.
@Suite("ambiguous manifests are refused", .timeLimit(.hangGuard))
struct AmbiguousManifestCLITests {
    @Test func duplicateKeysAreRefusedNamingTheKey() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        let twice = "{\"id\":\"com.example.a\",\"name\":\"A\",\"version\":\"1.0.0\",\"id\":\"com.example.b\"}"
        try await HostileInputCLITests.refused(
            sandbox, ["plugin", "register", try sandbox.write("twice.json", twice)], "the manifest has the key 'id' twice")
        // The same key spelled with an escape is the same key; nested objects are checked too.
        let escaped = "{\"id\":\"com.example.a\",\"name\":\"A\",\"version\":\"1.0.0\",\"\\u0069d\":\"com.example.b\"}"
        try await HostileInputCLITests.refused(
            sandbox, ["plugin", "register", try sandbox.write("escaped.json", escaped)], "the manifest has the key 'id' twice")
        let nested = manifest("com.example.a", "1.0.0", "\"metadata\":{\"team\":\"a\",\"team\":\"b\"}")
        try await HostileInputCLITests.refused(
            sandbox, ["plugin", "register", try sandbox.write("nested.json", nested)], "the key 'team' twice (in $.metadata)")
        let features = "{\"version\":2,\"features\":[{\"name\":\"a\",\"enabled\":true,\"enabled\":false,\"strategies\":[]}]}"
        try await HostileInputCLITests.refused(
            sandbox, ["flag", "import", try sandbox.write("features.json", features)], "the key 'enabled' twice (in $.features[0])")
    }

    @Test func buildMetadataDoesNotMakeANewVersion() async throws {
        let sandbox = try await Sandbox.withBoard([manifest("com.example.calendar", "1.0.0+build.1")])
        try await HostileInputCLITests.refused(
            sandbox, ["plugin", "register", try sandbox.write("b2.json", manifest("com.example.calendar", "1.0.0+build.2"))],
            "1.0.0+build.2 has the same precedence as the registered 1.0.0+build.1")
        try await sandbox.ok("plugin", "register", try sandbox.write("v2.json", manifest("com.example.calendar", "1.0.1")))
        // A version argument without (or with other) build metadata names the registered version.
        let kill = try await sandbox.ok("plugin", "kill", "com.example.calendar", "--version", "1.0.0", "--reason", "crashes")
        #expect(kill.stdout.contains("com.example.calendar@1.0.0+build.1"), "\(kill.stdout)")
        try await sandbox.ok("plugin", "revive", "com.example.calendar", "--version", "1.0.0+other")
        try await sandbox.ok("plugin", "yank", "com.example.calendar", "1.0.0", "--reason", "old")
        try await sandbox.ok("plugin", "unyank", "com.example.calendar", "1.0.0")
        let pin = try await sandbox.ok("plugin", "pin", "com.example.calendar", "1.0.0")
        #expect(pin.stdout.contains("to 1.0.0+build.1"), "\(pin.stdout)")
        let detail = try #require(try await sandbox.ok("--json", "plugin", "show", "com.example.calendar").json() as? [String: Any])
        let pinned = (detail["environments"] as? [[String: Any]])?.first?["pinned_version"] as? String
        #expect(pinned == "1.0.0+build.1")
    }
}
