import Foundation

/// OSV advisories written by hand in the specification's shape (`Tests/PlugboardStoreTests/Fixtures/advisories`): ranges
/// with `introduced` and `fixed`, `last_affected`, a withdrawn one, lists of `versions`, aliases; and documents that
/// must be refused (`advisories-refused`: another ecosystem, a `GIT` range, JSON cut short).
public enum AdvisoryFixtures {
    /// The folder of the four advisories the board takes in.
    public static let folder = root.appendingPathComponent("advisories").path
    /// The folder of the documents the board refuses.
    public static let refused = root.appendingPathComponent("advisories-refused").path

    /// The path of one fixture: `PBSA-2026-0001.json`, or `advisories-refused/malformed.json`.
    public static func path(_ name: String) -> String {
        name.contains("/") ? root.appendingPathComponent(name).path : root.appendingPathComponent("advisories/\(name)").path
    }

    /// The text of one fixture.
    public static func text(_ name: String) throws -> String { try String(contentsOfFile: path(name), encoding: .utf8) }

    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("PlugboardStoreTests/Fixtures")
}
