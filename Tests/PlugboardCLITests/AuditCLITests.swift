import Foundation
import PlugboardTestSupport
import Testing

/// The audit log: every change is recorded, and tampering done directly with SQLite is detected.
@Suite("audit log", .timeLimit(.hangGuard))
struct AuditCLITests {
    /// A board with a few changes, so the chain has rows to break.
    static func busyBoard() async throws -> Sandbox {
        let sandbox = try await Sandbox.withBoard([manifest("com.example.calendar", "1.0.0"), manifest("com.example.mail", "1.0.0")])
        try await sandbox.ok("plugin", "enable", "com.example.calendar", "--env", "production")
        try await sandbox.ok("plugin", "kill", "com.example.mail", "--reason", "INC-7 crash loop")
        try await sandbox.ok("owner", "add", "com.example.calendar", "alice")
        return sandbox
    }

    @Test func everyChangeIsListedWithWhoWhatWhenAndWhy() async throws {
        let sandbox = try await Self.busyBoard()
        let lines = try await sandbox.ok("audit", "--json").stdout.split(separator: "\n")
        let rows = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let actions = rows.compactMap { $0["action"] as? String }
        let migrations = await Self.migrationCount(sandbox)
        // The baseline (the state proof's first digests) follows migration 0006; later migrations that add only empty
        // tables record their rows like any change.
        #expect(
            actions == ["board.init"] + Array(repeating: "board.migrate", count: 6) + ["board.baseline"]
                + Array(repeating: "board.migrate", count: migrations - 6) + ["keys.init"]
                + ["plugin.register", "plugin.register", "environment.create", "plugin.enable", "plugin.kill", "owner.add"])
        let kill = try #require(rows.first { $0["action"] as? String == "plugin.kill" })
        #expect(kill["reason"] as? String == "INC-7 crash loop")
        #expect(kill["target_id"] as? String == "com.example.mail")
        #expect((kill["after_json"] as? String)?.contains("\"killed\":true") == true)
        #expect((kill["before_json"] as? String)?.contains("\"killed\":false") == true)
        let enable = try #require(rows.first { $0["action"] as? String == "plugin.enable" })
        #expect(enable["environment"] as? String == "production")
        #expect((enable["at"] as? String)?.hasSuffix("Z") == true)

        // Its register and its kill.
        #expect(try await sandbox.ok("audit", "--target", "com.example.mail", "--json").stdout.split(separator: "\n").count == 2)
        #expect(try await sandbox.ok("audit", "--limit", "2", "--json").stdout.split(separator: "\n").count == 2)
        #expect(try await sandbox.ok("audit", "--since", "1h", "--json").stdout.split(separator: "\n").count == rows.count)
        #expect(try await sandbox.ok("audit", "--since", "2999-01-01").stdout.contains("No audit rows match"))
        let table = try await sandbox.ok("audit").stdout
        #expect(table.hasPrefix("SEQ") && table.contains("plugin.kill"))
        // The auditors' view answers "who killed what, when and why" in one SELECT.
        let who = try await sandbox.boardFile.rows("SELECT who, target, reason FROM audit_trail WHERE action = 'plugin.kill'").first
        #expect(who?["target"]?.string == "kill_switch:com.example.mail")
    }

    /// The filters against the rows as SQLite holds them, JSON that reads back as stored, and a table whose columns
    /// line up although its widest cells come last (the listing is streamed: widths first, then rows).
    @Test func filtersTheTableAndJSONLinesAgreeWithTheLog() async throws {
        let sandbox = try await Sandbox.withBoard(
            ["com.example.mail", "com.example.mailer", "com.example.mail2"].map { manifest($0, "1.0.0") })
        try await sandbox.ok("plugin", "register", try sandbox.write("mail-1.1.json", manifest("com.example.mail", "1.1.0")))
        try await sandbox.ok("plugin", "enable", "com.example.mailer", "--env", "production", "--as", "ci-pipeline")
        let reason = "say \"hi\" \\ a/b — ✓ 日本"
        try await sandbox.ok("plugin", "kill", "com.example.mail", "--reason", reason)
        try await sandbox.ok("plugin", "kill", "com.example.mail2", "--reason", "a long reason that comes last of all the rows")

        // Every row, as stored.
        let stored = try await sandbox.boardFile.rows("SELECT seq, actor, on_behalf_of, target_id, reason FROM audit_log ORDER BY seq")
        func seq(_ row: BoardSQL.Row) throws -> Int64 { try #require(row["seq"]?.int64) }
        func seqs(_ arguments: String...) async throws -> [Int64] {
            try await sandbox.ok(["audit", "--json"] + arguments).stdout.split(separator: "\n").map { line in
                let row = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return try #require(row["seq"] as? Int64 ?? (row["seq"] as? Int).map(Int64.init))
            }
        }
        #expect(try await seqs() == stored.map(seq))
        // A plug-in's id and its versions (`ID@…`), not the ids that begin with it.
        let mail = stored.filter { row in
            let target = row["target_id"]?.string
            return target == "com.example.mail" || target?.hasPrefix("com.example.mail@") == true
        }
        #expect(mail.count >= 3)
        #expect(try await seqs("--target", "com.example.mail") == mail.map(seq))
        #expect(try await seqs("--target", "com.example.mail", "--limit", "1") == [seq(try #require(mail.last))])
        #expect(try await seqs("--target", "com.example.mai").isEmpty)
        // The OS user or the principal declared with --as.
        let declared = try stored.filter { $0["on_behalf_of"]?.string == "ci-pipeline" }.map(seq)
        #expect(declared.count == 2)  // production, made on the way, and the enable
        #expect(try await seqs("--actor", "ci-pipeline") == declared)
        let user = try #require(stored.last?["actor"]?.string)
        let mailerByUser = stored.filter { row in
            let target = row["target_id"]?.string
            return (target == "com.example.mailer" || target?.hasPrefix("com.example.mailer@") == true)
                && (row["actor"]?.string == user || row["on_behalf_of"]?.string == user)
        }
        #expect(mailerByUser.count == 2)
        #expect(try await seqs("--actor", user, "--target", "com.example.mailer") == mailerByUser.map(seq))
        // The newest rows, oldest first.
        #expect(try await seqs("--limit", "3") == stored.suffix(3).map(seq))

        // JSON reads back what is stored, quotes, backslashes and all.
        let kill = try #require(
            try await sandbox.ok("audit", "--json", "--target", "com.example.mail", "--limit", "1").json() as? [String: Any])
        #expect(kill["reason"] as? String == reason)
        // Every line is its row: one key per column that is not NULL (the line is written by hand, not by an encoder).
        let columns = try await sandbox.boardFile.rows("SELECT * FROM audit_log ORDER BY seq")
        let objects = try await sandbox.ok("audit", "--json").stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(objects.count == columns.count)
        for (object, row) in zip(objects, columns) {
            var expected: [String: String] = [:]
            for (column, value) in row where !value.isNull { expected[column] = value.string ?? value.description }
            let written = object.mapValues { ($0 as? String) ?? "\($0)" }
            #expect(written == expected)
        }

        // Each column starts at the same place on every line, the header's included.
        let lines = try await sandbox.ok("audit").stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == stored.count + 1)
        #expect(lines.first?.hasPrefix("SEQ") == true)
        #expect(Self.misaligned(lines).isEmpty, "\(Self.misaligned(lines))")
    }

    /// A listing longer than the table keeps from its first pass (10,000 rows) is read twice, and lines up too; both
    /// passes are one read of the board, so rows another process writes meanwhile are in both or in neither.
    @Test func aLongTableIsReadTwiceAndLinesUp() async throws {
        let sandbox = try await Sandbox.withBoard()
        let root = (try sandbox.write("probe", "") as NSString).deletingLastPathComponent
        let directory = root + "/manifests"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // The widest id is registered last, so only the second pass over the rows can show it aligned.
        for index in 0..<10_050 {
            let id = index == 10_049 ? "com.example.a-much-longer-plug-in-id-than-the-others" : "com.example.p\(index)"
            try manifest(id, "1.0.0").write(
                toFile: "\(directory)/\(String(format: "%05d", index)).json", atomically: false, encoding: .utf8)
        }
        try await sandbox.ok("plugin", "register", directory)
        let rows = try await sandbox.boardFile.int("SELECT count(*) FROM audit_log") ?? 0
        #expect(rows > 10_050)
        let lines = try await sandbox.ok("audit").stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == rows + 1)
        let header = try #require(lines.first)
        let target = header.distance(from: header.startIndex, to: header.range(of: "TARGET")!.lowerBound)
        let env = header.distance(from: header.startIndex, to: header.range(of: "ENV")!.lowerBound)
        #expect(env - target >= "plugin:com.example.a-much-longer-plug-in-id-than-the-others  ".count)
        #expect(Self.misaligned(lines).isEmpty, "\(Self.misaligned(lines).prefix(3))")

        // Another process registers plug-ins with ids wider than any in the log while the log is listed: a row that
        // only the second pass saw would not fit its column.
        let wide = try (0..<30).map { index in
            try sandbox.write(
                "wide-\(index).json", manifest("com.example.written-while-the-log-is-read.\(String(repeating: "w", count: 40))-\(index)"))
        }
        let writer = Task {
            for path in wide { try await sandbox.ok("plugin", "register", path) }
        }
        for _ in 0..<4 {
            let listing = try await sandbox.ok("audit").stdout.split(separator: "\n").map(String.init)
            #expect(Self.misaligned(listing).isEmpty, "\(Self.misaligned(listing).prefix(3))")
            let seqs = listing.dropFirst().compactMap { Int($0.prefix { $0 != " " }) }
            #expect(seqs == Array(1...max(1, listing.count - 1)) && seqs.count >= rows)
        }
        try await writer.value
    }

    /// The lines of a table whose cells do not begin where the header's columns do.
    static func misaligned(_ lines: [String]) -> [String] {
        guard let header = lines.first else { return [] }
        let characters = Array(header)
        // Where each column after the first begins: after two spaces, at a character that is not one.
        let starts = characters.indices.filter {
            $0 >= 2 && characters[$0 - 2] == " " && characters[$0 - 1] == " " && characters[$0] != " "
        }
        return lines.filter { line in
            let cells = Array(line)
            return !starts.allSatisfy { start in
                cells.count > start && cells[start - 2] == " " && cells[start - 1] == " " && cells[start] != " "
            }
        }
    }

    /// How many migrations a new board applied (each writes one `board.migrate` row).
    static func migrationCount(_ sandbox: Sandbox) async -> Int {
        let status = try? await sandbox.ok("migrate", "--status", "--json").json() as? [String: Any]
        return (status?["applied"] as? [Any])?.count ?? 0
    }

    /// The sequence number of the last audit row of the busy board: `board.init`, one `board.migrate` a migration,
    /// `board.baseline` (the state proof's first digests), `keys.init` (the master key of the secure storage), then
    /// the six changes of ``busyBoard()``.
    static func lastSeq(_ sandbox: Sandbox) async -> Int { await 1 + migrationCount(sandbox) + 1 + 1 + 6 }

    @Test func verifyPassesOnAnUntouchedLog() async throws {
        let sandbox = try await Self.busyBoard()
        let last = await Self.lastSeq(sandbox)
        let result = try await sandbox.ok("audit", "verify")
        #expect(result.stdout.contains("intact: \(last) rows"))
        let checkpoint = try await sandbox.ok("audit", "checkpoint").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(checkpoint.hasPrefix("\(last):"))
        #expect(try await sandbox.ok("audit", "verify", "--checkpoint", checkpoint).stdout.contains("checkpoint \(last) matches"))
    }

    @Test func theTriggersRefuseUpdateAndDelete() async throws {
        let sandbox = try await Self.busyBoard()
        let file = sandbox.boardFile
        let update = await #expect(throws: BoardSQL.Failure.self) {
            try await file.execute("UPDATE audit_log SET reason = 'nothing' WHERE seq = 7")
        }
        #expect(update?.stderr.contains("audit_log is append-only: rows cannot be updated") == true, "\(String(describing: update))")
        let delete = await #expect(throws: BoardSQL.Failure.self) { try await file.execute("DELETE FROM audit_log WHERE seq = 7") }
        #expect(delete?.stderr.contains("audit_log is append-only: rows cannot be deleted") == true, "\(String(describing: delete))")
    }

    /// A tampering done with SQLite directly, and the row `audit verify` must name.
    struct Tampering: CustomTestStringConvertible, Sendable {
        let name: String
        let sql: String
        let expected: String
        var testDescription: String { name }
    }

    static let tamperings: [Tampering] = [
        Tampering(
            name: "edit a reason",
            sql: """
                DROP TRIGGER audit_log_no_update; UPDATE audit_log SET reason = 'routine maintenance' WHERE seq = @kill;
                """, expected: "audit row @kill was edited"),
        Tampering(
            name: "edit the actor and restore the trigger",
            sql: """
                DROP TRIGGER audit_log_no_update; UPDATE audit_log SET actor = 'someone-else' WHERE seq = @reg;
                CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'append-only'); END;
                """, expected: "audit row @reg was edited"),
        Tampering(
            name: "delete a row in the middle",
            sql: """
                DROP TRIGGER audit_log_no_delete; DELETE FROM audit_log WHERE seq = @env;
                CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'append-only'); END;
                """, expected: "audit row @env is missing"),
        Tampering(
            name: "delete the first row",
            sql: """
                DROP TRIGGER audit_log_no_delete; DELETE FROM audit_log WHERE seq = 1;
                CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'append-only'); END;
                """, expected: "audit row 1 is missing"),
        Tampering(
            name: "insert a forged row at the end",
            sql: """
                INSERT INTO audit_log (seq, at, actor, action, outcome, target_type, prev_hash, hash)
                SELECT @next, '2026-01-01T00:00:00.000Z', 'mallory', 'plugin.enable', 'ok', 'plugin', hash, printf('%064d', 1) FROM audit_log WHERE seq = @last;
                """, expected: "audit row @next was edited"),
        Tampering(
            name: "swap two rows",
            sql: """
                DROP TRIGGER audit_log_no_update;
                UPDATE audit_log SET seq = -1 WHERE seq = @enable; UPDATE audit_log SET seq = @enable WHERE seq = @kill; UPDATE audit_log SET seq = @kill WHERE seq = -1;
                """, expected: "audit row @enable "),
        Tampering(
            name: "drop the triggers only", sql: "DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete;",
            expected: "trigger audit_log_no_update on audit_log was dropped"),
    ]

    @Test(arguments: tamperings)
    func tamperingWithSQLiteIsDetected(_ tampering: Tampering) async throws {
        let sandbox = try await Self.busyBoard()
        let last = await Self.lastSeq(sandbox)
        // Rows of the busy board, counted from its end: … register, register, environment.create, enable, kill, owner.add.
        func fill(_ text: String) -> String {
            text.replacingOccurrences(of: "@next", with: "\(last + 1)").replacingOccurrences(of: "@last", with: "\(last)")
                .replacingOccurrences(of: "@kill", with: "\(last - 1)").replacingOccurrences(of: "@enable", with: "\(last - 2)")
                .replacingOccurrences(of: "@env", with: "\(last - 3)").replacingOccurrences(of: "@reg", with: "\(last - 5)")
        }
        let sql = fill(tampering.sql)
        try await sandbox.boardFile.execute(sql)
        let result = try await sandbox.run(["audit", "verify"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains(fill(tampering.expected)), "\(result.stderr)")
        #expect(result.stderr.hasPrefix("error: audit log verification failed"))
    }

    @Test func aTruncatedTailIsDetectedWithACheckpoint() async throws {
        let sandbox = try await Self.busyBoard()
        let checkpoint = try await sandbox.ok("audit", "checkpoint").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let last = await Self.lastSeq(sandbox)
        try await sandbox.boardFile.execute(
            """
            DROP TRIGGER audit_log_no_delete; DELETE FROM audit_log WHERE seq >= \(last - 1);
            CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'append-only'); END;
            """)
        // Without the checkpoint the shorter chain is self-consistent, but the rows its lost changes left are not
        // (the owner added by the last row)...
        let alone = try await sandbox.run(["audit", "verify"])
        #expect(alone.status == 1)
        #expect(alone.stderr.contains("plugin_owners: row com.example.calendar/alice was added without an audit row"), "\(alone.stderr)")
        #expect(!alone.stderr.contains("checkpoint"))
        // ...with it, the truncation is named.
        let result = try await sandbox.run(["audit", "verify", "--checkpoint", checkpoint])
        #expect(result.status == 1)
        #expect(result.stderr.contains("audit row \(last) of the checkpoint is gone: the log was truncated"))
    }

    @Test func verifyJSONNamesTheFirstBadRow() async throws {
        let sandbox = try await Self.busyBoard()
        try await sandbox.boardFile.execute("DROP TRIGGER audit_log_no_update; UPDATE audit_log SET after_json = '{}' WHERE seq = 2")
        let result = try await sandbox.run(["audit", "verify", "--json"])
        #expect(result.status == 1)
        let json = try #require(try result.json() as? [String: Any])
        #expect(json["first_bad_seq"] as? Int == 2)
        #expect(json["ok"] as? Bool == false)
    }
}
