import Foundation
import PlugboardTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// End-to-end tests of `plugboard secret …` and `plugboard keys …`, and of the master key `plugboard init` sets up.
@Suite("plugboard secret and keys commands", .timeLimit(.hangGuard))
struct SecretCLITests {
    static let calendar = "com.example.calendar"
    static let mail = "com.example.mail"

    /// A board with the calendar and mail plug-ins registered.
    static func board() async throws -> Sandbox {
        try await Sandbox.withBoard([manifest(calendar), manifest(mail)])
    }

    /// A new random master key, base64, as `openssl rand -base64 32` prints it.
    static func randomKey() -> String {
        Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    /// Writes bytes into the sandbox and returns the path.
    static func write(_ sandbox: Sandbox, _ name: String, _ data: Data) throws -> String {
        let path = sandbox.root.appendingPathComponent(name).path
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Checks a refused or failed command: exit 1, nothing on stdout, one line on stderr.
    static func expectRefused(_ result: CLIResult, _ contains: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 1, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("error: "), "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.split(separator: "\n").count == 1, "one sentence, one line: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(contains), "\(result.stderr)", sourceLocation: sourceLocation)
    }

    // MARK: init and the key file

    @Test func initCreatesAPrivateKeyFileAndSaysToBackItUp() async throws {
        let sandbox = try Sandbox()
        let created = try await sandbox.ok("init")
        let keyFile = sandbox.board + ".key"
        #expect(created.stdout.contains("Created the master key file \(keyFile) (mode 0600"), "\(created)")
        #expect(created.stdout.contains("back it up"))
        #expect(sandbox.mode(keyFile) == 0o600)
        #expect(sandbox.mode(sandbox.board) == 0o600)
        let keyText = try String(contentsOfFile: keyFile, encoding: .utf8)
        #expect(Data(base64Encoded: keyText.trimmingCharacters(in: .whitespacesAndNewlines))?.count == 32)
        let keys = try #require(try await sandbox.ok("keys", "list", "--json").json() as? [String: Any])
        #expect((keys["master_key_id"] as? String)?.count == 16)
        #expect(created.stdout.contains(keys["master_key_id"] as? String ?? "?"))

        let json = try Sandbox()
        let result = try #require(try await json.ok("init", "--json").json() as? [String: Any])
        let masterKey = try #require(result["master_key"] as? [String: Any])
        #expect(masterKey["source"] as? String == "key_file")
        #expect(masterKey["path"] as? String == json.board + ".key")
        #expect(masterKey["created"] as? Bool == true)
    }

    @Test func initWithTheEnvironmentVariableCreatesNoKeyFile() async throws {
        let sandbox = try Sandbox()
        let key = Self.randomKey()
        let created = try await sandbox.run(["init"], environment: ["PLUGBOARD_MASTER_KEY": key])
        #expect(created.status == 0, "\(created)")
        #expect(created.stdout.contains("comes from PLUGBOARD_MASTER_KEY"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.board + ".key"))
        try await sandbox.ok("plugin", "register", try sandbox.write("m.json", manifest()))
        let set = try await sandbox.run(
            ["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], environment: ["PLUGBOARD_MASTER_KEY": key], stdin: "v")
        #expect(set.status == 0, "\(set)")
        // Without the variable there is no key at all, and the error says what to do.
        Self.expectRefused(
            try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "k"]), "restore the key file from your backup")
        #expect(
            try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "k"], environment: ["PLUGBOARD_MASTER_KEY": key]).stdout
                == "v")
    }

    @Test func initRefusesAKeyFileOthersCanReadAndLeavesNoBoard() async throws {
        let sandbox = try Sandbox()
        let keyFile = sandbox.board + ".key"
        try Data((Self.randomKey() + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        chmod(keyFile, 0o644)
        Self.expectRefused(try await sandbox.run(["init"]), "run chmod 600 \(keyFile)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.board))
        // Once private, the existing key file is used rather than replaced.
        chmod(keyFile, 0o600)
        let created = try await sandbox.ok("init")
        #expect(created.stdout.contains("Using the existing master key file \(keyFile)"), "\(created)")
    }

    @Test func keysInitGivesAnOlderBoardItsMasterKey() async throws {
        let sandbox = try await Self.board()
        // A board from before secure storage: no key check value.
        try await sandbox.boardFile.execute("DELETE FROM secret_master_key")
        try FileManager.default.removeItem(atPath: sandbox.board + ".key")
        Self.expectRefused(
            try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], stdin: "v"),
            "run plugboard keys init")
        let initialised = try await sandbox.ok("keys", "init")
        #expect(initialised.stdout.contains("Initialised the board's secure storage"))
        #expect(initialised.stdout.contains("Created the master key file"))
        #expect(sandbox.mode(sandbox.board + ".key") == 0o600)
        #expect(try await sandbox.ok("keys", "init").stdout.contains("already initialised"))
        try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], stdin: "v")
        #expect(try await sandbox.ok("secret", "get", "--plugin", Self.calendar, "k").stdout == "v")
    }

    // MARK: secret set, get, list, delete

    @Test func setGetListAndDeleteRoundTripExactBytes() async throws {
        let sandbox = try await Self.board()
        // stdin, byte for byte: the newline is part of the value.
        let set = try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "api-token", "--from-file", "-"], stdin: "s3cr3t\n")
        #expect(set.status == 0 && set.stderr.isEmpty, "\(set)")
        #expect(try await sandbox.ok("secret", "get", "--plugin", Self.calendar, "api-token").stdout == "s3cr3t\n")

        // A binary file, exactly.
        let binary = Data((0...255).map { UInt8($0) })
        try await sandbox.ok("secret", "set", "--plugin", Self.calendar, "cert", "--from-file", try Self.write(sandbox, "cert.bin", binary))
        let json = try #require(try await sandbox.ok("secret", "get", "--plugin", Self.calendar, "cert", "--json").json() as? [String: Any])
        #expect(json["value_base64"] as? String == binary.base64EncodedString())
        #expect(json["value"] is NSNull)
        #expect(json["plugin"] as? String == Self.calendar && json["key"] as? String == "cert")

        // A value on the command line works, with a warning; no newline is added on output.
        let inline = try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "password", "hunter2"])
        #expect(inline.status == 0, "\(inline)")
        #expect(inline.stderr.hasPrefix("warning: ") && inline.stderr.contains("shell history"))
        #expect(try await sandbox.ok("secret", "get", "--plugin", Self.calendar, "password").stdout == "hunter2")
        let text = try #require(
            try await sandbox.ok("secret", "get", "--plugin", Self.calendar, "password", "--json").json() as? [String: Any])
        #expect(text["value"] as? String == "hunter2")
        // The same value again changes nothing.
        #expect(
            try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "password", "hunter2"]).stdout.contains("nothing changed"))

        #expect(try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k", "v", "--from-file", "-"]).status == 2)
        #expect(try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k"]).status == 2)
        #expect(try await sandbox.run(["secret", "get", "k"]).status == 2)

        let list = try await sandbox.ok("secret", "list", "--plugin", Self.calendar).stdout
        #expect(list.contains("api-token") && list.contains("cert") && list.contains("password") && list.contains("readable"))
        #expect(!list.contains("s3cr3t") && !list.contains("hunter2"))
        let entries = try #require(try await sandbox.ok("secret", "list", "--plugin", Self.calendar, "--json").json() as? [[String: Any]])
        #expect(entries.compactMap { $0["key"] as? String } == ["api-token", "cert", "password"])
        #expect(entries.allSatisfy { $0["value"] == nil && $0["data_key_version"] as? Int == 1 })
        #expect(try await sandbox.ok("secret", "list", "--plugin", Self.mail).stdout.contains("has no secrets"))

        #expect(
            try await sandbox.ok("secret", "delete", "--plugin", Self.calendar, "password").stdout.contains("Deleted the secret 'password'")
        )
        Self.expectRefused(
            try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "password"]), "has no secret named 'password'")
        #expect(try await sandbox.ok("secret", "delete", "--plugin", Self.calendar, "password").stdout.contains("nothing changed"))

        // Every change and read is audited with the key name, never the value.
        let audit = try await sandbox.ok("audit", "--json").stdout
        let actions = audit.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["action"] as? String
        }.filter { $0.hasPrefix("secret.") }
        #expect(
            actions == [
                "secret.set", "secret.get", "secret.set", "secret.get", "secret.set", "secret.get", "secret.get", "secret.delete",
                "secret.get",
            ])
        #expect(audit.contains("\\\"key\\\":\\\"api-token\\\""))
        #expect(!audit.contains("s3cr3t") && !audit.contains("hunter2") && !audit.contains(binary.base64EncodedString().prefix(12)))
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }

    @Test func badInputIsRefusedWithOneSentenceAndChangesNothing() async throws {
        let sandbox = try await Self.board()
        try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], stdin: "v")
        let tooLarge = try Self.write(sandbox, "big.bin", Data(count: (1 << 20) + 1))
        let cases: [([String], String)] = [
            (["secret", "set", "--plugin", Self.calendar, "a\u{7}b", "--from-file", "-"], "the secure storage key name is not valid"),
            (
                ["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "/nonexistent/value"],
                "the value file /nonexistent/value does not exist"
            ),
            (["secret", "set", "--plugin", Self.calendar, "k", "--from-file", tooLarge], "is larger than 1 MiB; nothing was changed"),
            (["secret", "get", "--plugin", Self.calendar, ""], "it is empty"),
            (["keys", "shred", Self.calendar, "--reason", " "], "the reason is empty"),
            (["keys", "rotate", "--new-key-env", "NO_SUCH_VARIABLE_HERE"], "NO_SUCH_VARIABLE_HERE is not set"),
        ]
        for (arguments, message) in cases {
            let before = try await sandbox.snapshot()
            Self.expectRefused(try await sandbox.run(arguments, stdin: "v"), message)
            #expect(try await sandbox.snapshot() == before, "\(arguments)")
        }
        // A plug-in id that is not one is an argument error, as for every command that takes one.
        let before = try await sandbox.snapshot()
        let badID = try await sandbox.run(["secret", "set", "--plugin", "Not An Id", "k", "--from-file", "-"], stdin: "v")
        #expect(
            badID.status == 2 && badID.stdout.isEmpty && badID.stderr.hasPrefix("error: ")
                && badID.stderr.contains("plug-in id 'Not An Id' is not valid"), "\(badID)")
        #expect(try await sandbox.snapshot() == before)
        // An unknown plug-in is refused (and, like every "not found", audited).
        Self.expectRefused(
            try await sandbox.run(["secret", "set", "--plugin", "com.example.unknown", "k", "--from-file", "-"], stdin: "v"),
            "com.example.unknown is not registered")
    }

    // MARK: The master key

    @Test func aWrongMasterKeyIsRefusedBeforeAnythingChanges() async throws {
        let sandbox = try await Self.board()
        try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], stdin: "v")
        let wrong = ["PLUGBOARD_MASTER_KEY": Self.randomKey(), "NEW": Self.randomKey()]
        let commands: [[String]] = [
            ["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"],
            ["secret", "set", "--plugin", Self.calendar, "new", "--from-file", "-"],
            ["secret", "get", "--plugin", Self.calendar, "k"],
            ["secret", "delete", "--plugin", Self.calendar, "k"],
            ["keys", "rotate"],
            ["keys", "rotate", "--new-key-env", "NEW"],
            ["keys", "rotate", "--plugin", Self.calendar, "--reencrypt"],
            ["keys", "shred", Self.calendar],
        ]
        let before = try await sandbox.snapshot()
        let keyFile = try Data(contentsOf: URL(fileURLWithPath: sandbox.board + ".key"))
        for command in commands {
            let result = try await sandbox.run(command, environment: wrong, stdin: "w")
            Self.expectRefused(result, "error: this master key does not belong to this board (")
            #expect(result.stderr.contains("PLUGBOARD_MASTER_KEY"))
            #expect(try await sandbox.snapshot() == before, "\(command)")
        }
        // A key file holding another key: refused the same way, and the message says what to do.
        try FileManager.default.removeItem(atPath: sandbox.board + ".key")
        try Data((Self.randomKey() + "\n").utf8).write(to: URL(fileURLWithPath: sandbox.board + ".key"))
        chmod(sandbox.board + ".key", 0o600)
        for command in commands.prefix(5) {
            Self.expectRefused(
                try await sandbox.run(command, stdin: "w"),
                "this master key does not belong to this board (the key file \(sandbox.board).key holds")
            #expect(try await sandbox.snapshot() == before, "\(command)")
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.board + ".key.next"))
        try FileManager.default.removeItem(atPath: sandbox.board + ".key")
        try keyFile.write(to: URL(fileURLWithPath: sandbox.board + ".key"))
        chmod(sandbox.board + ".key", 0o600)
        #expect(try await sandbox.ok("secret", "get", "--plugin", Self.calendar, "k").stdout == "v")
    }

}
