import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One board shared by several OS users, each a process of its own: the owner and a second
/// operator who write, and a reader (a host, an auditor) who may only read. The users have no passwd entries; they
/// are uids given to `setpriv`, so the tests need root.
@Suite(
    "a board shared between OS users", .timeLimit(.hangGuard), .serialized,
    .enabled(if: canSwitchUser, "needs root and setpriv to act as other OS users"))
struct SharedBoardTests {
    static let group: UInt32 = 4100
    static let owner: UInt32 = 4101
    static let reader: UInt32 = 4102
    static let operator2: UInt32 = 4103

    /// `setpriv` as `uid`, with its own primary group and the shared group as a supplementary one (the owner's
    /// primary group is the shared group).
    static func user(_ uid: UInt32) -> [String] {
        let primary = uid == owner ? group : uid
        return ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(primary)", "--groups=\(group)"]
    }

    static let sidecars = ["-wal", "-shm"]

    /// A folder of the shared group (set-group-ID unless `setgid` is false) holding a board the owner made, with
    /// one enabled plug-in, and the board file's mode set to `mode`.
    func sharedBoard(mode: mode_t, setgid: Bool = true) async throws -> Sandbox {
        let sandbox = try Sandbox()
        chown(sandbox.root.path, Self.owner, Self.group)
        chmod(sandbox.root.path, setgid ? 0o2770 : 0o770)
        let asOwner = Self.user(Self.owner)
        #expect(try await sandbox.run(["init"], prefix: asOwner).status == 0)
        let registered = try await sandbox.run(
            ["plugin", "register", try sandbox.write("alpha.json", manifest("com.example.alpha"))], prefix: asOwner)
        #expect(registered.status == 0, "\(registered)")
        #expect(try await sandbox.run(["plugin", "enable", "com.example.alpha"], prefix: asOwner).status == 0)
        chmod(sandbox.board, mode)
        // The -wal and -shm follow the board's new mode from the next time a writer opens it.
        #expect(try await sandbox.run(["plugin", "list"], prefix: asOwner).status == 0)
        #expect(Self.sidecars.allSatisfy { sandbox.mode(sandbox.board + $0) == mode & 0o666 })
        return sandbox
    }

    func owner(_ path: String) -> UInt32 {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_uid : UInt32.max
    }

    func group(_ path: String) -> UInt32 {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_gid : UInt32.max
    }

    func removeSidecars(_ sandbox: Sandbox) {
        for suffix in Self.sidecars { unlink(sandbox.board + suffix) }
    }

    func sidecarsExist(_ sandbox: Sandbox) -> Bool {
        Self.sidecars.allSatisfy { FileManager.default.fileExists(atPath: sandbox.board + $0) }
    }

    func killed(_ sandbox: Sandbox) async throws -> Bool {
        let rows = try await sandbox.ok("plugin", "list", "--json").json() as? [[String: Any]] ?? []
        return rows.first { $0["id"] as? String == "com.example.alpha" }?["killed"] as? Bool ?? false
    }

    @Test("a reader reads without leaving files a writer cannot use, and a reader's leftovers never block a kill switch")
    func aReaderNeverBlocksAWriter() async throws {
        let sandbox = try await sharedBoard(mode: 0o640)
        let asOwner = Self.user(Self.owner)
        let asReader = Self.user(Self.reader)

        // Writers keep the -wal and -shm, so the reader can read, and they stay the owner's.
        #expect(sidecarsExist(sandbox))
        let list = try await sandbox.run(["plugin", "list"], prefix: asReader)
        #expect(list.status == 0 && list.stdout.contains("com.example.alpha"), "\(list)")
        #expect(Self.sidecars.allSatisfy { owner(sandbox.board + $0) == Self.owner })
        #expect(try await sandbox.run(["plugin", "kill", "com.example.alpha", "--reason", "one"], prefix: asOwner).status == 0)
        #expect(try await sandbox.run(["plugin", "revive", "com.example.alpha"], prefix: asOwner).status == 0)

        // Without them (a board last closed by an older version), a reader refuses to create them.
        removeSidecars(sandbox)
        let refused = try await sandbox.run(["plugin", "list"], prefix: asReader)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("a user who may only read the board must not create them"), "\(refused.stderr)")
        #expect(!Self.sidecars.contains { FileManager.default.fileExists(atPath: sandbox.board + $0) })

        // Another tool run by the reader (sqlite3 without -readonly) creates them as its own: the owner's next
        // write removes them, since nobody has the board open, and the kill switch goes through.
        let auditor = try await sandbox.run(
            ["-cmd", "SELECT count(*) FROM plugins", sandbox.board], db: false, executable: "/usr/bin/sqlite3", prefix: asReader)
        #expect(auditor.status == 0, "\(auditor)")
        #expect(Self.sidecars.allSatisfy { owner(sandbox.board + $0) == Self.reader }, "sqlite3 should have left the reader's files")
        let kill = try await sandbox.run(["plugin", "kill", "com.example.alpha", "--reason", "two"], prefix: asOwner)
        #expect(kill.status == 0, "\(kill)")
        #expect(try await killed(sandbox))
        #expect(Self.sidecars.allSatisfy { owner(sandbox.board + $0) == Self.owner })

        // While the reader's sqlite3 still has the board open, the owner is told exactly who blocks the write, and
        // nothing changes; once it exits, the write goes through. (The snapshot is taken first: SQLite run as root,
        // as the tests are, gives the -wal and -shm it opens to the board's owner.)
        let before = try await sandbox.snapshot()
        removeSidecars(sandbox)
        let holder = try ChildProcess(
            asReader[0], Array(asReader.dropFirst()) + ["/usr/bin/sqlite3", "-cmd", "SELECT count(*) FROM plugins", sandbox.board])
        try await eventually("sqlite3 to open the board (\(holder.errorOutput))") {
            BoardFileHold.holdsLock(pid: holder.pid, on: sandbox.board)
                && Self.sidecars.allSatisfy { owner(sandbox.board + $0) == Self.reader }
        }
        let blocked = try await sandbox.run(["plugin", "revive", "com.example.alpha"], prefix: asOwner)
        #expect(blocked.status == 1, "\(blocked)")
        #expect(
            blocked.stderr.contains("not writable by this user, so no change can be written, kill switches included"), "\(blocked.stderr)")
        #expect(
            blocked.stderr.contains("process \(holder.pid) (sqlite3, user uid:\(Self.reader)) still has the board open"),
            "\(blocked.stderr)")
        #expect(try await sandbox.snapshot() == before)
        #expect(await holder.closeInput() == 0)
        #expect(try await sandbox.run(["plugin", "revive", "com.example.alpha"], prefix: asOwner).status == 0)
        #expect(try await killed(sandbox) == false)
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }

    @Test("a host that may only read the board sees a kill switch, and does not reload on every poll")
    func aReadOnlyHostSeesKillSwitches() async throws {
        let sandbox = try await sharedBoard(mode: 0o640)
        let asOwner = Self.user(Self.owner)
        let asReader = Self.user(Self.reader)
        // The master key stays the owner's (mode 0600): a host of another user gets it from its environment.
        let key = try String(contentsOfFile: sandbox.board + ".key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let host = try ChildProcess(
            asReader[0],
            Array(asReader.dropFirst()) + [
                Sandbox.builtExecutable("plugboard-test-host"), "--db", sandbox.board, "--plugins", "com.example.alpha",
                "--host-id", "reader", "--poll-ms", "50",
            ],
            environment: ["PLUGBOARD_MASTER_KEY": key])
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "the host did not start: \(host.errorOutput)")
        // Events are printed from a task of their own, so "started" may come before them: wait for the line.
        #expect(
            await host.waitForLine { $0.contains("\"loaded\"") && $0.contains("com.example.alpha") } != nil, "\(host.output)")

        // A reader's SQLite rebuilds its WAL index for every read, where data_version moves on every read: the
        // host follows the audit log instead, so an idle board means an idle host.
        let seen = host.output.count
        // The point is what does not happen (a change on an idle board): a fixed wait of about 12 of the host's polls.
        try await Task.sleep(for: .milliseconds(600))
        let idleChanges = host.output.dropFirst(seen).filter { $0.contains("\"changed\"") }
        #expect(idleChanges.isEmpty, "the host reloaded an unchanged board: \(idleChanges)")

        let mark = host.output.count
        #expect(try await sandbox.run(["plugin", "kill", "com.example.alpha", "--reason", "incident"], prefix: asOwner).status == 0)
        let deactivated = await host.waitForLine(after: mark) {
            $0.contains("\"deactivated\"") && $0.contains("\"killed\"")
        }
        #expect(deactivated != nil, "the reader's host never saw the kill switch: \(host.output)")
        #expect(await host.closeInput() == 0)
        #expect(Self.sidecars.allSatisfy { owner(sandbox.board + $0) == Self.owner })
    }

    @Test("a second operator of the group writes the board and adds artifacts; files follow the board's group and mode")
    func aSecondOperatorWrites() async throws {
        // No set-group-ID bit on the folder: new files get their creator's primary group, which Plugboard corrects.
        let sandbox = try await sharedBoard(mode: 0o660, setgid: false)
        let asOwner = Self.user(Self.owner)
        let asOperator = Self.user(Self.operator2)

        removeSidecars(sandbox)
        #expect(try await sandbox.run(["plugin", "list"], prefix: asOperator).status == 0)
        for suffix in Self.sidecars {
            let path = sandbox.board + suffix
            #expect(owner(path) == Self.operator2 && group(path) == Self.group && sandbox.mode(path) == 0o660, "\(suffix)")
        }
        #expect(try await sandbox.run(["plugin", "kill", "com.example.alpha", "--reason", "x"], prefix: asOwner).status == 0)

        // The owner's first artifact makes the store; the second operator can add to it.
        let library = try sandbox.write("alpha.so", "alpha library")
        let first = try await sandbox.run(
            ["plugin", "register", try sandbox.write("a2.json", manifest("com.example.alpha", "2.0.0")), "--artifact", library],
            prefix: asOwner)
        #expect(first.status == 0, "\(first)")
        let store = sandbox.board + ".artifacts"
        for folder in [store, store + "/sha256", store + "/tmp"] {
            var info = stat()
            stat(folder, &info)
            #expect(info.st_mode & 0o7777 == 0o2770 && info.st_gid == Self.group, "\(folder): \(String(info.st_mode & 0o7777, radix: 8))")
        }
        let other = try sandbox.write("beta.so", "beta library")
        let second = try await sandbox.run(
            ["plugin", "register", try sandbox.write("b.json", manifest("com.example.beta")), "--artifact", other], prefix: asOperator)
        #expect(second.status == 0, "\(second)")
        let stored = try FileManager.default.contentsOfDirectory(atPath: store + "/sha256").map { store + "/sha256/" + $0 }
        #expect(stored.count == 2)
        #expect(stored.allSatisfy { sandbox.mode($0) == 0o640 && group($0) == Self.group })

        // A store an older version made private (0700) to its first user: the second operator gets a precise error
        // and the board stays as it was; the owner's next registration opens it to the group.
        for folder in [store, store + "/sha256", store + "/tmp"] { chmod(folder, 0o700) }
        let before = try await sandbox.snapshot()
        let refused = try await sandbox.run(
            ["plugin", "register", try sandbox.write("b2.json", manifest("com.example.beta", "2.0.0")), "--artifact", other],
            prefix: asOperator)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("is not writable by uid:\(Self.operator2)"), "\(refused.stderr)")
        #expect(try await sandbox.snapshot() == before)
        let reopened = try await sandbox.run(
            ["plugin", "register", try sandbox.write("a3.json", manifest("com.example.alpha", "3.0.0")), "--artifact", library],
            prefix: asOwner)
        #expect(reopened.status == 0, "\(reopened)")
        let retried = try await sandbox.run(
            ["plugin", "register", try sandbox.write("b3.json", manifest("com.example.beta", "2.0.0")), "--artifact", other],
            prefix: asOperator)
        #expect(retried.status == 0, "\(retried)")
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }

    @Test("a board every user can read gets a warning")
    func aWorldReadableBoardIsWarnedAbout() async throws {
        let sandbox = try await sharedBoard(mode: 0o644)
        let list = try await sandbox.run(["plugin", "list"], prefix: Self.user(Self.owner))
        #expect(list.status == 0)
        #expect(
            list.stderr.contains("warning: the board \(sandbox.board) is readable by every user of this machine (mode 0644)"),
            "\(list.stderr)")
        chmod(sandbox.board, 0o640)
        #expect(try await sandbox.run(["plugin", "list"], prefix: Self.user(Self.owner)).stderr.isEmpty)
    }
}
