import Foundation
import PlugboardTestSupport
import Testing

/// Scheduled change requests: a running `plugboard serve` applies a due, approved request within 5 seconds of its
/// time; `plugboard change apply-due` does it for a board nobody serves; a due request whose rows moved since its
/// approvals is not applied, goes back to open and says why.
@Suite(
    "scheduled change requests (processes)", .timeLimit(.hangGuard), .serialized,
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")),
    .enabled(if: canSwitchUser, "needs root and setpriv: each person is an OS user of their own"))
struct ScheduledChangeTests {
    static let pay = ProtectedBoard.pay
    static let search = ProtectedBoard.search
    static let later = "2099-01-01T00:00:00Z"

    /// An ISO-8601 time `seconds` from now, as the board writes its timestamps.
    static func time(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date().addingTimeInterval(seconds))
    }

    static func date(_ text: String?) throws -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return try #require(text.flatMap { formatter.date(from: $0) }, "'\(text ?? "nil")' is not a time")
    }

    /// Opens `arguments` (a protected change) on the board file, scheduled far ahead, and has alice and bob approve it.
    static func approvedRequest(_ board: ProtectedBoard, _ arguments: [String]) async throws -> Int {
        let opened = try await board.sandbox.ok(arguments + ["--at", later, "--json"])
        let id = try ProtectedBoard.requestID(opened)
        try await board.ok("alice", "change", "approve", String(id))
        let last = try await board.ok("bob", "change", "approve", String(id))
        #expect(
            last.stdout == "change request \(id) approved by bob; 2 of 2 approvals; it applies at 2099-01-01T00:00:00.000Z\n", "\(last)")
        return id
    }

    /// The request's state, its scheduled time, when it was closed and its note, from the board file.
    static func state(_ sandbox: Sandbox, _ id: Int) async throws -> (state: String, scheduled: String?, closed: String?, result: String?) {
        let row = try #require(
            try await sandbox.boardFile.rows(
                "SELECT state, scheduled_at, closed_at, result FROM change_requests WHERE id = ?", .integer(Int64(id))
            ).first)
        return (row["state"]?.string ?? "?", row["scheduled_at"]?.string, row["closed_at"]?.string, row["result"]?.string)
    }

    @Test func aRunningServeAppliesAnApprovedRequestWithinFiveSecondsOfItsTime() async throws {
        let board = try await ProtectedBoard.start()
        defer { Task { await board.stop() } }
        let sandbox = board.sandbox
        let id = try await Self.approvedRequest(board, ["plugin", "enable", Self.search, "--env", "production"])
        #expect(try await Self.state(sandbox, id).state == "scheduled")

        // Brought forward to a few seconds from now by its author.
        let moved = try await sandbox.ok("change", "schedule", String(id), "--at", Self.time(3))
        #expect(moved.stdout.hasPrefix("change request \(id) scheduled for "), "\(moved)")
        let applied = try await eventually("request \(id) applied by the running serve", poll: .milliseconds(200)) {
            let now = try await Self.state(sandbox, id)
            return now.state == "applied" ? now : nil
        }
        let late = try Self.date(applied.closed).timeIntervalSince(try Self.date(applied.scheduled))
        print("serve applied request \(id) \(late) s after its time")
        #expect(late >= 0 && late <= 5, "applied \(late) s after its time")
        #expect(
            try await sandbox.boardFile.int(
                "SELECT enabled FROM plugin_environments WHERE plugin_id = ? AND environment = 'production'", .text(Self.search)) == 1)
        let apply = try #require(try await AuditRows.read(sandbox).last { $0.action == "change.apply" })
        #expect(apply.targetID == String(id) && Set(apply.after?["approvals"] as? [String] ?? []) == ["alice", "bob"], "\(apply)")
        try await sandbox.ok("audit", "verify")
    }

    @Test func aRunningServeDoesNotApplyADueRequestWhoseRowsMovedAndSaysWhy() async throws {
        let board = try await ProtectedBoard.start()
        defer { Task { await board.stop() } }
        let sandbox = board.sandbox
        try await sandbox.ok("plugin", "enable", Self.pay, "--env", "production", "--emergency", "--reason", "first release")
        let id = try await Self.approvedRequest(board, ["plugin", "pin", Self.pay, "1.1.0", "--env", "production"])
        // A stop moves the row the pin touches, after both approvals.
        try await board.ok("carol", "plugin", "disable", Self.pay, "--env", "production")
        try await sandbox.ok("change", "schedule", String(id), "--at", Self.time(2))

        let refused = try await eventually("request \(id) refused by the running serve", poll: .milliseconds(200)) {
            let now = try await Self.state(sandbox, id)
            return now.result != nil ? now : nil
        }
        #expect(refused.state == "open", "\(refused)")
        #expect(refused.result?.contains("moved since") == true && refused.result?.contains(Self.pay) == true, "\(refused)")
        #expect(
            try await sandbox.boardFile.string("SELECT pinned_version FROM plugin_environments WHERE plugin_id = ?", .text(Self.pay)) == nil
        )
        let shown = try await sandbox.ok("change", "show", String(id)).stdout
        #expect(shown.contains("note: ") && shown.contains("moved since"), "\(shown)")
        #expect(
            try await sandbox.boardFile.int(
                "SELECT count(*) FROM audit_log WHERE action = 'change.refused' AND target_id = ?", .text(String(id))) == 1)
    }

    @Test func applyDueAppliesWhatIsDueOnABoardNobodyServes() async throws {
        let board = try await ProtectedBoard.start()
        let sandbox = board.sandbox
        try await sandbox.ok("plugin", "enable", Self.pay, "--env", "production", "--emergency", "--reason", "first release")
        let due = try await Self.approvedRequest(board, ["plugin", "enable", Self.search, "--env", "production"])
        let notYet = try await Self.approvedRequest(board, ["flag", "enable", "checkout.new-flow", "--env", "production"])
        let moved = try await Self.approvedRequest(board, ["plugin", "pin", Self.pay, "1.1.0", "--env", "production"])
        try await board.ok("carol", "plugin", "disable", Self.pay, "--env", "production")
        await board.stop()

        #expect(try await sandbox.ok("change", "apply-due").stdout == "No change request is due.\n")
        try await sandbox.ok("change", "schedule", String(due), "--at", "2020-01-01T00:00:00Z")
        try await sandbox.ok("change", "schedule", String(moved), "--at", "2020-01-01T00:00:01Z")
        let run = try await sandbox.ok("change", "apply-due")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(run)")
        #expect(lines.first?.hasPrefix("change request \(due) applied: ") == true, "\(run)")
        #expect(
            lines.last?.hasPrefix(
                "change request \(moved) was due; it was not applied: plugin_environments ") == true,
            "\(run)")
        #expect(try await Self.state(sandbox, due).state == "applied")
        #expect(try await Self.state(sandbox, notYet).state == "scheduled")
        let refused = try await Self.state(sandbox, moved)
        #expect(refused.state == "open" && refused.result?.contains("moved since alice, bob approved it") == true, "\(refused)")
        // Nothing more is due: the refused request waits to be approved again.
        #expect(try await sandbox.ok("change", "apply-due").stdout == "No change request is due.\n")
        let applier = try await sandbox.boardFile.string(
            "SELECT json_extract(after_json, '$.applied_by') FROM audit_log WHERE action = 'change.apply' AND target_id = ?",
            .text(String(due)))
        #expect(applier == "root", "\(applier ?? "nil")")
        try await sandbox.ok("audit", "verify")
    }

    /// A due, approved request edited in the board file behind the log is checked as every other step checks it: left
    /// as it is, with a sentence naming it, while the others due apply; a running serve says it once, not at each pass.
    @Test(arguments: [false, true])
    func anEditedDueRequestIsLeftAsItIsAndTheOthersDueApply(digest: Bool) async throws {
        let board = try await ProtectedBoard.start()
        let sandbox = board.sandbox
        let edited = try await Self.approvedRequest(board, ["plugin", "pin", Self.pay, "1.0.0", "--env", "production"])
        let due = try await Self.approvedRequest(board, ["plugin", "enable", Self.search, "--env", "production"])
        await board.stop()
        try await sandbox.ok("change", "schedule", String(edited), "--at", "2020-01-01T00:00:00Z")
        try await sandbox.ok("change", "schedule", String(due), "--at", "2020-01-01T00:00:01Z")
        try await EditedChangeRequestTests.edit(sandbox, id: edited, digest: digest)
        let row = "SELECT json_array(operation, body, digest, summary, state, result) FROM change_requests WHERE id = \(edited)"
        let before = try await sandbox.boardFile.strings(row)

        let run = try await sandbox.ok("change", "apply-due")
        let said = "change request \(edited) was due; it was edited outside plugboard: "
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines.first?.hasPrefix(said) == true, "\(run)")
        #expect(lines.first?.contains(digest ? "it shows \"plugin pin " : "its operation and body give the digest") == true, "\(run)")
        #expect(lines.last?.hasPrefix("change request \(due) applied: ") == true, "\(run)")
        #expect(try await sandbox.boardFile.strings(row) == before, "the edited request changed")
        #expect(try await Self.state(sandbox, due).state == "applied")
        #expect(
            try await sandbox.boardFile.string("SELECT pinned_version FROM plugin_environments WHERE plugin_id = ?", .text(Self.pay)) == nil
        )

        // Still due: a running serve says it once (the schedule looks at due requests once a second).
        let server = try ChildProcess(Sandbox.binary, ["serve", "--db", sandbox.board, "--listen", "127.0.0.1:0", "--log-level", "notice"])
        defer { Task { _ = await server.stop() } }
        _ = try await eventually("serve to say that request \(edited) was due", poll: .milliseconds(200)) {
            server.errorOutput.contains(said) ? true : nil
        }
        try await Task.sleep(for: .seconds(3))
        #expect(server.errorOutput.components(separatedBy: said).count == 2, "\(server.errorOutput)")
        #expect(try await sandbox.boardFile.strings(row) == before, "the edited request changed")
    }
}
