import Foundation
import PlugboardTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Master key files, rotation, shredding and writers in two processes.
extension SecretCLITests {
    @Test func aKeyFileOthersCanReadIsRefused() async throws {
        let sandbox = try await Self.board()
        try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], stdin: "v")
        let keyFile = sandbox.board + ".key"
        #expect(sandbox.mode(keyFile) == 0o600)
        #expect(sandbox.mode(sandbox.board) & 0o077 == 0)
        chmod(keyFile, 0o644)
        let before = try await sandbox.snapshot()
        Self.expectRefused(
            try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "k"]),
            "is readable or writable by its group or others (mode 0644); run chmod 600 \(keyFile)")
        Self.expectRefused(try await sandbox.run(["keys", "rotate"]), "chmod 600")
        #expect(try await sandbox.snapshot() == before)
        #expect(sandbox.mode(keyFile) == 0o644)
    }

    // MARK: Rotation and shredding

    @Test func rotationsKeepEveryValueReadable() async throws {
        let sandbox = try await Self.board()
        let values = [(Self.calendar, "a", "one"), (Self.calendar, "b", "two"), (Self.mail, "a", "three")]
        for (plugin, key, value) in values {
            try await sandbox.run(["secret", "set", "--plugin", plugin, key, "--from-file", "-"], stdin: value)
        }
        func expectReadable(sourceLocation: SourceLocation = #_sourceLocation) async throws {
            for (plugin, key, value) in values {
                #expect(try await sandbox.ok("secret", "get", "--plugin", plugin, key).stdout == value, sourceLocation: sourceLocation)
            }
        }
        let keyFile = sandbox.board + ".key"
        let oldKey = try String(contentsOfFile: keyFile, encoding: .utf8)
        let oldID = try #require(try await sandbox.ok("keys", "list", "--json").json() as? [String: Any])["master_key_id"] as? String

        let master = try await sandbox.ok("keys", "rotate")
        #expect(master.stdout.contains("Rotated the master key from id \(oldID ?? "?")"), "\(master)")
        #expect(master.stdout.contains("rewrapped 2 data key(s)") && master.stdout.contains("back it up"))
        #expect(try String(contentsOfFile: keyFile, encoding: .utf8) != oldKey)
        #expect(sandbox.mode(keyFile) == 0o600)
        #expect(!FileManager.default.fileExists(atPath: keyFile + ".next"))
        try await expectReadable()
        Self.expectRefused(
            try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "a"], environment: ["PLUGBOARD_MASTER_KEY": oldKey]),
            "does not belong to this board")

        let data = try await sandbox.ok("keys", "rotate", "--plugin", Self.calendar)
        #expect(data.stdout.contains("version 2 seals new values; version 1 is retired"))
        try await expectReadable()
        let reencrypted = try await sandbox.ok("keys", "rotate", "--plugin", Self.calendar, "--reencrypt")
        #expect(reencrypted.stdout.contains("re-encrypted 2 value(s)"))
        try await expectReadable()
        let list = try #require(try await sandbox.ok("secret", "list", "--plugin", Self.calendar, "--json").json() as? [[String: Any]])
        #expect(list.compactMap { $0["data_key_version"] as? Int } == [3, 3])
        let keys = try #require(try await sandbox.ok("keys", "list", "--plugin", Self.calendar, "--json").json() as? [String: Any])
        #expect((keys["data_keys"] as? [[String: Any]])?.compactMap { $0["state"] as? String } == ["retired", "retired", "active"])
        #expect(try await sandbox.run(["keys", "rotate", "--reencrypt"]).status == 2)

        let actions = try await sandbox.ok("audit", "--json").stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["action"] as? String
        }
        #expect(actions.filter { $0.hasPrefix("keys.rotate") } == ["keys.rotate_master", "keys.rotate_data_key", "keys.rotate_data_key"])
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }

    @Test func aMasterKeyFromTheEnvironmentRotatesThroughANewVariable() async throws {
        let sandbox = try Sandbox()
        let oldKey = Self.randomKey()
        let newKey = Self.randomKey()
        let old = ["PLUGBOARD_MASTER_KEY": oldKey]
        #expect(try await sandbox.run(["init"], environment: old).status == 0)
        try await sandbox.ok("plugin", "register", try sandbox.write("m.json", manifest()))
        #expect(
            try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], environment: old, stdin: "v")
                .status == 0
        )

        let before = try await sandbox.snapshot()
        Self.expectRefused(try await sandbox.run(["keys", "rotate"], environment: old), "plugboard keys rotate --new-key-env NEW")
        #expect(try await sandbox.snapshot() == before)

        let rotated = try await sandbox.run(["keys", "rotate", "--new-key-env", "NEW"], environment: old.merging(["NEW": newKey]) { $1 })
        #expect(rotated.status == 0, "\(rotated)")
        #expect(rotated.stdout.contains("set PLUGBOARD_MASTER_KEY to it"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.board + ".key"))
        Self.expectRefused(
            try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "k"], environment: old), "does not belong to this board")
        #expect(
            try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "k"], environment: ["PLUGBOARD_MASTER_KEY": newKey]).stdout
                == "v")
    }

    @Test func shreddingMakesSecretsUnreadable() async throws {
        let sandbox = try await Self.board()
        try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], stdin: "v")
        try await sandbox.run(["secret", "set", "--plugin", Self.mail, "k", "--from-file", "-"], stdin: "m")
        let shred = try await sandbox.ok("keys", "shred", Self.calendar, "--reason", "plug-in retired (CHG-9)")
        #expect(shred.stdout.contains("Shredded data key version(s) 1 of \(Self.calendar)"), "\(shred)")
        Self.expectRefused(
            try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "k"]),
            "can no longer be decrypted because its data key was shredded")
        #expect(try await sandbox.ok("secret", "list", "--plugin", Self.calendar).stdout.contains("unreadable"))
        #expect(try await sandbox.ok("secret", "get", "--plugin", Self.mail, "k").stdout == "m")
        #expect(try await sandbox.ok("keys", "shred", Self.calendar).stdout.contains("nothing changed"))
        let audit = try await sandbox.ok("audit", "--target", Self.calendar).stdout
        #expect(audit.contains("keys.shred") && audit.contains("plug-in retired (CHG-9)"))
        // Setting the secret again starts a new data key.
        try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], stdin: "v2")
        #expect(try await sandbox.ok("secret", "get", "--plugin", Self.calendar, "k").stdout == "v2")
    }

    // MARK: Concurrency and permissions

    @Test func concurrentWritersFromTwoProcessesLoseNoValue() async throws {
        let sandbox = try await Self.board()
        let failures = Mutex<[CLIResult]>([])
        // Two loops, each a stream of plugboard processes, writing different keys at the same time.
        // Off the shared pool: concurrentPerform blocks its calling thread until both loops are done.
        try await Sandbox.offPool {
            DispatchQueue.concurrentPerform(iterations: 2) { loop in
                for index in 0..<20 {
                    let result = try? sandbox.runBlocking(
                        ["secret", "set", "--plugin", Self.calendar, "loop\(loop)-\(index)", "--from-file", "-"],
                        stdin: "value \(loop)-\(index)")
                    if result?.status != 0 {
                        failures.withLock { $0.append(result ?? CLIResult(status: -1, stdout: "", stderr: "did not run")) }
                    }
                }
            }
        }
        for failure in failures.withLock({ $0 }) { Issue.record("a writer failed: \(failure)") }
        let entries = try #require(try await sandbox.ok("secret", "list", "--plugin", Self.calendar, "--json").json() as? [[String: Any]])
        #expect(entries.count == 40)
        for loop in 0..<2 {
            for index in 0..<20 {
                #expect(
                    try await sandbox.ok("secret", "get", "--plugin", Self.calendar, "loop\(loop)-\(index)").stdout
                        == "value \(loop)-\(index)")
            }
        }
        let keys = try #require(try await sandbox.ok("keys", "list", "--plugin", Self.calendar, "--json").json() as? [String: Any])
        #expect((keys["data_keys"] as? [[String: Any]])?.first?["encryption_count"] as? Int == 40)
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }

    @Test(.enabled(if: canSwitchUser, "needs root and setpriv to act as another OS user"))
    func anotherUserCannotReadTheKeyFileNorActWithoutARole() async throws {
        let sandbox = try await Self.board()
        try await sandbox.run(["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], stdin: "v")
        chown(sandbox.root.path, 65534, 65534)
        chown(sandbox.board, 65534, 65534)
        let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        // The key file (root's, 0600) is not readable by another user.
        Self.expectRefused(try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "k"], prefix: asNobody), "Permission denied")

        // With the key, still no role: refused, and the refusal audited.
        let key = try String(contentsOfFile: sandbox.board + ".key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let env = ["PLUGBOARD_MASTER_KEY": key, "NEW": Self.randomKey()]
        Self.expectRefused(
            try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "k"], environment: env, prefix: asNobody),
            "nobody may not read the secrets of \(Self.calendar)")
        Self.expectRefused(
            try await sandbox.run(
                ["secret", "set", "--plugin", Self.calendar, "k", "--from-file", "-"], environment: env, stdin: "x", prefix: asNobody),
            "nobody may not set the secrets of")
        Self.expectRefused(
            try await sandbox.run(["keys", "shred", Self.calendar], environment: env, prefix: asNobody),
            "nobody may not shred the data keys of")
        Self.expectRefused(
            try await sandbox.run(["keys", "rotate", "--new-key-env", "NEW"], environment: env, prefix: asNobody), "only a board admin")
        let refusals = try await sandbox.boardFile.strings(
            "SELECT action FROM audit_log WHERE outcome = 'refused' AND actor = 'nobody' ORDER BY seq")
        #expect(refusals == ["secret.get", "secret.set", "keys.shred", "keys.rotate_master"])
        #expect(try await sandbox.ok("secret", "get", "--plugin", Self.calendar, "k").stdout == "v")

        // A maintainer may read and write the plug-in's secrets, but not rotate the master key.
        try await sandbox.ok("owner", "add", Self.calendar, "nobody", "--role", "maintainer")
        let read = try await sandbox.run(["secret", "get", "--plugin", Self.calendar, "k"], environment: env, prefix: asNobody)
        #expect(read.status == 0 && read.stdout == "v", "\(read)")
        Self.expectRefused(
            try await sandbox.run(["keys", "rotate", "--new-key-env", "NEW"], environment: env, prefix: asNobody), "only a board admin")
    }
}
