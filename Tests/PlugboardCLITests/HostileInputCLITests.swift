import Foundation
import PlugboardTestSupport
import Testing

/// Hostile input: endless or oversized files and stdin, control characters, ambiguous manifests. Each
/// is refused with exit 1 and one sentence on stderr, and leaves the board byte-for-byte unchanged.
@Suite("hostile input is refused", .timeLimit(.hangGuard))
struct HostileInputCLITests {
    /// Runs `arguments` and checks the refusal: exit 1, nothing on stdout, one `error:` line holding `expected`, the board unchanged.
    @discardableResult
    static func refused(
        _ sandbox: Sandbox, _ arguments: [String], stdin: String? = nil, prefix: [String] = [], _ expected: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CLIResult {
        let before = try await sandbox.snapshot()
        let result = try await sandbox.run(arguments, stdin: stdin, prefix: prefix)
        #expect(result.status == 1, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("error: "), "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(expected), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.split(separator: "\n").count == 1, "one sentence, one line: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(try await sandbox.snapshot() == before, sourceLocation: sourceLocation)
        return result
    }

    /// Runs `arguments` and checks the usage error (a malformed command-line argument): exit 2, nothing on stdout, an
    /// `error:` sentence holding `expected` then argument-parser's usage, the board unchanged.
    @discardableResult
    static func usageError(
        _ sandbox: Sandbox, _ arguments: [String], _ expected: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CLIResult {
        let before = try await sandbox.snapshot()
        let result = try await sandbox.run(arguments)
        #expect(result.status == 2, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("error: "), "\(result)", sourceLocation: sourceLocation)
        let sentence = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(sentence.contains(expected), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(try await sandbox.snapshot() == before, sourceLocation: sourceLocation)
        return result
    }

    /// Writes `count` bytes of `byte` to a file in the sandbox.
    static func bigFile(_ sandbox: Sandbox, _ name: String, count: Int, byte: UInt8 = UInt8(ascii: " ")) throws -> String {
        let path = sandbox.root.appendingPathComponent(name).path
        try Data(repeating: byte, count: count).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Pipes `count` zero bytes into the command's stdin through a shell, as `head -c N /dev/zero | plugboard …` would.
    /// (`head` is told to be quiet: when the test process ignores SIGPIPE, as any process running NIO sockets does, its
    /// children inherit that, and `head` reports the pipe the refusing command closed instead of dying silently.)
    static func zeros(_ count: Int) -> [String] {
        ["/bin/sh", "-c", "head -c \(count) /dev/zero 2>/dev/null | \"$0\" \"$@\""]
    }

    // MARK: unbounded reads (item 3)

    @Test(.timeLimit(.hangGuard))
    func endlessManifestsAreRefusedAtTheLimit() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        try await Self.refused(
            sandbox, ["plugin", "register", "/dev/zero"], "the manifest /dev/zero is larger than 1 MiB; nothing was changed")
        try await Self.refused(
            sandbox, ["plugin", "register", "-"], prefix: Self.zeros(3 << 20), "the manifest on stdin is larger than 1 MiB")
        let big = try Self.bigFile(sandbox, "big.json", count: (1 << 20) + 1)
        try await Self.refused(sandbox, ["plugin", "register", big], "the manifest \(big) is larger than 1 MiB")
        // Exactly at the limit is read (and then judged as JSON).
        let atLimit = try Self.bigFile(sandbox, "limit.json", count: 1 << 20)
        try await Self.refused(sandbox, ["plugin", "register", atLimit], "not valid JSON")
    }

    @Test(.timeLimit(.hangGuard))
    func endlessFeaturesContextsAndSecretsAreRefusedAtTheLimit() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        try await Self.refused(
            sandbox, ["flag", "import", "/dev/zero"], "the features /dev/zero is larger than 16 MiB; nothing was changed")
        let features = try Self.bigFile(sandbox, "features.json", count: (16 << 20) + 1)
        try await Self.refused(sandbox, ["flag", "import", features], "is larger than 16 MiB")
        try await Self.refused(
            sandbox, ["flag", "evaluate", "--features", "/dev/zero", "--contexts", "-"], stdin: "", "is larger than 16 MiB")
        let good = try sandbox.write("good.json", "{\"version\":2,\"features\":[]}")
        let longLine = "{\"toggle\":\"x\",\"context\":{}}\n" + String(repeating: " ", count: (64 << 10) + 1) + "\n"
        try await Self.refused(
            sandbox, ["flag", "evaluate", "--features", good, "--contexts", "-"], stdin: longLine,
            "--contexts line 2 is longer than 64 KiB")
        try await Self.refused(
            sandbox, ["secret", "set", "--plugin", "com.example.calendar", "k", "--from-file", "/dev/zero"],
            "the value /dev/zero is larger than 1 MiB; nothing was changed")
        try await Self.refused(
            sandbox, ["secret", "set", "--plugin", "com.example.calendar", "k", "--from-file", "-"], prefix: Self.zeros(2 << 20),
            "the value on stdin is larger than 1 MiB")
        try await Self.refused(
            sandbox, ["flag", "import", sandbox.root.path], "cannot be read (it is a folder)")
    }
}
