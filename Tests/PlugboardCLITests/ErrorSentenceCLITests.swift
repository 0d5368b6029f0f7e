import Foundation
import PlugboardTestSupport
import Testing

/// Errors from the system (a full disk) and from hostile input (a newline in a version) reach the user as one clear sentence.
@Suite("errors are one clear sentence", .timeLimit(.hangGuard))
struct ErrorSentenceCLITests {
    /// A full disk (here a file-size limit) while copying an artifact: the system's words and one sentence, not
    /// Foundation's error dump, and the board unchanged.
    @Test func aFullDiskWhileStoringAnArtifactIsOneClearSentence() async throws {
        let sandbox = try await Sandbox.withBoard()
        let manifestPath = try sandbox.write("m.json", manifest("com.example.big", "1.0.0"))
        let artifact = sandbox.root.appendingPathComponent("big.so").path
        try Data(repeating: 7, count: 600_000).write(to: URL(fileURLWithPath: artifact))
        let before = try await sandbox.snapshot()
        // `ulimit -f` counts 512-byte blocks in sh; SIGXFSZ ignored so that the write fails instead of killing.
        let result = try await sandbox.run(
            ["plugin", "register", manifestPath, "--artifact", artifact],
            prefix: ["/bin/sh", "-c", "trap '' XFSZ; ulimit -f 600; exec \"$@\"", "sh"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("file too large (the disk is full or a file size limit was reached)"), "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain"))
        #expect(try await sandbox.snapshot() == before)
    }

    /// A version holding a newline cannot forge a second line (`note: …`) in the error.
    @Test func aNewlineInAVersionIsEscapedInTheError() async throws {
        let sandbox = try await Sandbox.withBoard()
        let path = try sandbox.write("nl.json", #"{"id":"com.example.nl","name":"N","version":"a\nnote: b"}"#)
        let result = try await sandbox.run(["plugin", "register", path])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(#"'a\nnote: b' is not a valid version"#), "\(result.stderr)")
    }
}
