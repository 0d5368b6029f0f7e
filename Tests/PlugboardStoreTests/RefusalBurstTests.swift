import Foundation
import GRDB
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// Refused attempts in a process that bounds them (`Board.boundRefusals()`, as `plugboard serve` does): the first of a
/// burst is a row of its own, the rest are one row with their count, written before any later row and when the log is
/// read; the chain and the state proof verify throughout.
@Suite("bounded refusals", .timeLimit(.hangGuard))
struct RefusalBurstTests {
    static let admin = try! Principal(osUser: "alice")
    static let stranger = try! Principal(osUser: "mallory")

    /// The refused rows: action, target and count (one for a row of its own).
    static func refusals(_ board: Board) throws -> [String] {
        try board.auditRecords(AuditQuery()).filter { $0.outcome == "refused" }.map { record in
            let count = record.afterJSON.flatMap { text in
                (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["count"] as? Int
            }
            return "\(record.action) \(record.targetID ?? "-") \(count ?? 1)"
        }
    }

    @Test func aBurstIsItsFirstRowAndOneCountedRowBeforeTheNextChange() throws {
        let board = try Board.inMemory(by: Self.admin)
        board.boundRefusals()
        for index in 0..<50 {
            #expect(throws: BoardError.self) { try board.addAdmin("mallory\(index % 3)", by: Self.stranger) }
        }
        // A change by someone else: the counted refusals are written before its row.
        _ = try board.addAdmin("bob", by: Self.admin)
        let records = try board.auditRecords(AuditQuery())
        let actions = records.suffix(3).map { "\($0.action) \($0.outcome)" }
        #expect(actions == ["admin.add refused", "admin.add refused", "admin.add ok"], "\(actions)")
        let summary = try #require(records.dropLast().last?.afterJSON)
        #expect(summary.contains(#""count":49"#) && summary.contains(#""targets":["mallory1","mallory2","mallory0"]"#), "\(summary)")
        #expect(records.dropLast().last?.targetID == nil)

        // Further refusals go on counting in the same burst; reading the log writes their count.
        for _ in 0..<10 { _ = try? board.addAdmin("mallory0", by: Self.stranger) }
        #expect(try Self.refusals(board) == ["admin.add mallory0 1", "admin.add - 49", "admin.add mallory0 10"])
        #expect(try board.verifyAudit().ok)
    }

    @Test func eachPrincipalAndActionHasItsOwnBurstAndEndedBurstsAreWritten() throws {
        let bursts = RefusalBursts()
        bursts.startCounting()
        let start = ContinuousClock.now
        let entry = AuditEntry(action: .pluginKill, outcome: .refused, targetType: "plugin", targetID: "com.example.a")
        let other = try! Principal(osUser: "eve")
        #expect(bursts.admit(entry, by: Self.stranger, at: "t0", now: start)?.isEmpty == true)
        #expect(bursts.admit(entry, by: other, at: "t0", now: start)?.isEmpty == true)
        var owner = entry
        owner.action = .ownerAdd
        #expect(bursts.admit(owner, by: Self.stranger, at: "t0", now: start)?.isEmpty == true)
        // Rotating through actions opens one burst each, no more.
        #expect(bursts.admit(owner, by: Self.stranger, at: "t1", now: start + .seconds(1)) == nil)
        #expect(bursts.admit(entry, by: Self.stranger, at: "t1", now: start + .seconds(1)) == nil)
        #expect(bursts.admit(entry, by: Self.stranger, at: "t2", now: start + .seconds(2)) == nil)
        // An open burst is not written by a timer's pass; an ended one is, once.
        #expect(bursts.take(closedOnly: true, now: start + .seconds(30)).isEmpty)
        let ended = bursts.take(closedOnly: true, now: start + RefusalBursts.window)
        #expect(Set(ended.map(\.entry.action)) == [.pluginKill, .ownerAdd] && ended.count == 2)
        let kill = try #require(ended.first { $0.entry.action == .pluginKill })
        #expect(kill.actor == Self.stranger)
        #expect(kill.entry.after?.canonicalText.contains(#""count":2,"first_at":"t1","last_at":"t2""#) == true)
        #expect(bursts.take(now: start + RefusalBursts.window).isEmpty)
        // After its window, a refusal opens a new burst and is written again.
        #expect(bursts.admit(entry, by: Self.stranger, at: "t3", now: start + .seconds(61)) != nil)
    }

    @Test func aProcessThatDoesNotBoundRefusalsWritesEachOne() throws {
        let board = try Board.inMemory(by: Self.admin)
        for _ in 0..<3 { _ = try? board.addAdmin("mallory", by: Self.stranger) }
        #expect(try Self.refusals(board) == ["admin.add mallory 1", "admin.add mallory 1", "admin.add mallory 1"])
    }
}

/// Counted refusals are forgotten only once written: a change that fails to commit, or a write of their own that
/// fails, keeps them for the next write.
@Suite("bounded refusals kept until written", .timeLimit(.hangGuard))
struct RefusalBurstFailureTests {
    /// Makes every insert into the audit log fail (`outcome`: only the rows with it), or, with nil, lets them pass.
    static func failInserts(_ board: Board, outcome: String?) throws {
        try board.writer.writeWithoutTransaction { db in
            try db.execute(sql: "DROP TRIGGER IF EXISTS temp.fail_audit")
            guard let outcome else { return }
            try db.execute(
                sql: """
                    CREATE TEMP TRIGGER fail_audit BEFORE INSERT ON main.audit_log WHEN \(outcome == "any" ? "1" : "NEW.outcome = '\(outcome)'")
                    BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END
                    """)
        }
    }

    @Test func countsSurviveAChangeThatFailsToCommit() throws {
        let board = try Board.inMemory(by: RefusalBurstTests.admin)
        board.boundRefusals()
        for _ in 0..<5 { _ = try? board.addAdmin("mallory", by: RefusalBurstTests.stranger) }
        // The change takes the counted refusals into its transaction, then fails at its own row.
        try Self.failInserts(board, outcome: "ok")
        #expect(throws: BoardError.self) { try board.addAdmin("bob", by: RefusalBurstTests.admin) }
        try Self.failInserts(board, outcome: nil)
        #expect(try RefusalBurstTests.refusals(board) == ["admin.add mallory 1", "admin.add mallory 4"])
        #expect(try board.verifyAudit().ok)
    }

    @Test func aFailedWriteOfRefusalsKeepsThemAndSaysSo() throws {
        let board = try Board.inMemory(by: RefusalBurstTests.admin)
        board.boundRefusals()
        for _ in 0..<5 { _ = try? board.addAdmin("mallory", by: RefusalBurstTests.stranger) }
        try Self.failInserts(board, outcome: "any")
        let failed = board.flushRefusals()
        #expect(failed?.message.contains("1 audit row of refused attempts could not be written") == true, "\(String(describing: failed))")
        // A refusal that opens a burst while writes fail is kept too.
        let eve = try Principal(osUser: "eve")
        #expect(throws: BoardError.self) { try board.addAdmin("eve", by: eve) }
        try Self.failInserts(board, outcome: nil)
        #expect(board.flushRefusals() == nil)
        #expect(try RefusalBurstTests.refusals(board) == ["admin.add mallory 1", "admin.add mallory 4", "admin.add eve 1"])
        #expect(try board.verifyAudit().ok)
    }
}
