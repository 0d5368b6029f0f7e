import Foundation

/// The files that belong to a board but live beside it, never in it: the master key, the board key, the artifacts.
package struct BoardCompanions {
    package struct Companion: Codable, Sendable {
        package let what: String
        package let path: String
    }

    package let all: [Companion]

    package init(board: String) {
        all = [
            Companion(what: "the master key file", path: board + ".key"),
            Companion(what: "the board key", path: board + ".board-key"),
            Companion(what: "the plug-in artifacts", path: board + ".artifacts"),
        ]
    }

    /// Those that exist, and the master key's environment variable when it is set.
    package var present: [Companion] {
        let variable =
            ProcessInfo.processInfo.environment["PLUGBOARD_MASTER_KEY"] == nil
            ? [] : [Companion(what: "the master key", path: "$PLUGBOARD_MASTER_KEY")]
        return variable + all.filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The master key file when it is missing and the key does not come from the environment.
    package var missing: [Companion] {
        guard ProcessInfo.processInfo.environment["PLUGBOARD_MASTER_KEY"] == nil else { return [] }
        return all.prefix(1).filter { !FileManager.default.fileExists(atPath: $0.path) }
    }
}
