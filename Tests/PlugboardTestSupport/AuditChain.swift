import Foundation

/// The audit log as an auditor reads it: its rows through the `sqlite3` tool.
public enum AuditRows {
    /// One audit row: who did what, where, and its `after_json` parsed.
    public struct Row: Sendable, CustomStringConvertible {
        public let seq: Int
        public let actor: String
        public let action: String
        public let outcome: String
        public let targetID: String?
        public let environment: String?
        public let afterJSON: String?

        /// `after_json` as an object.
        public var after: [String: Any]? {
            afterJSON.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }

        public var description: String {
            "\(seq) \(actor) \(action) \(outcome) \(targetID ?? "-") \(environment ?? "-") \(afterJSON ?? "-")"
        }
    }

    /// The rows from `seq` on, in order.
    public static func read(_ sandbox: Sandbox, from seq: Int = 1) async throws -> [Row] {
        try await sandbox.boardFile.rows(
            "SELECT seq, actor, action, outcome, target_id, environment, after_json FROM audit_log WHERE seq >= ? ORDER BY seq",
            .integer(Int64(seq))
        ).map { row in
            Row(
                seq: row["seq"]?.int ?? 0, actor: row["actor"]?.string ?? "", action: row["action"]?.string ?? "",
                outcome: row["outcome"]?.string ?? "", targetID: row["target_id"]?.string, environment: row["environment"]?.string,
                afterJSON: row["after_json"]?.string)
        }
    }
}

/// An edit of the audit log by someone with write access to the board file who covers their tracks: the append-only
/// trigger dropped, the SQL run, every row's hash from the first edited row on recomputed with the auditor's own
/// encoding (`Tools/Scripts/audit-verify`, Python's standard library), and the trigger put back exactly as it was.
/// What `audit verify` can still find after it is what the log proves beyond its chain.
public enum ChainForgery {
    /// The auditor's script, whose chain hash the rewrite uses.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tools/Scripts/audit-verify").path

    static let rewriter = """
        import sqlite3, sys, importlib.machinery, importlib.util
        loader = importlib.machinery.SourceFileLoader("audit_verify", sys.argv[1])
        spec = importlib.util.spec_from_loader("audit_verify", loader)
        audit = importlib.util.module_from_spec(spec)
        loader.exec_module(audit)
        db = sqlite3.connect(sys.argv[2], isolation_level=None)
        db.text_factory = str
        db.execute("BEGIN IMMEDIATE")
        trigger = db.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'audit_log_no_update'").fetchone()[0]
        db.execute("DROP TRIGGER audit_log_no_update")
        for statement in [s for s in sys.stdin.read().split(";\\n") if s.strip()]:
            db.execute(statement)
        rows = db.execute("SELECT seq, at, actor, on_behalf_of, action, outcome, target_type, target_id, environment, reason,"
                          " before_json, after_json, state_changes, state_root, via, prev_hash, hash FROM audit_log ORDER BY seq").fetchall()
        prev, changed = "0" * 64, 0
        for row in rows:
            via = row[14]
            fields = list(row[:12]) + ([row[12], row[13]] if row[13] is not None or via is not None else [])
            if via is not None:
                fields.append(via)
            digest = audit.chain_hash(prev, fields)
            if digest != row[16] or prev != row[15]:
                db.execute("UPDATE audit_log SET prev_hash = ?, hash = ? WHERE seq = ?", (prev, digest, row[0]))
                changed += 1
            prev = digest
        db.execute(trigger)
        db.execute("COMMIT")
        print(changed)
        """

    /// Runs `sql` (statements separated by `;` and a new line) on the board at `path` and rewrites the chain after it;
    /// answers how many rows' hashes changed.
    @discardableResult
    public static func rewrite(_ path: String, sql: String) async throws -> Int {
        let result = try await Spawned.run("/usr/bin/python3", ["-c", rewriter, script, path], input: Data(sql.utf8)).text
        guard result.status == 0, let changed = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BoardSQL.Failure(stderr: result.stderr, message: "rewriting the chain of \(path) failed: \(result.stderr)")
        }
        return changed
    }
}
