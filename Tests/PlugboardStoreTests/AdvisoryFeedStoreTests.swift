import Crypto
import Foundation
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// Signed advisory feeds: what a subscriber verifies (signature, key, ecosystem, head) and what it applies (a replay
/// refused, an expired feed only for what stops), each refusal changing nothing.
@Suite("advisory feeds: verify and apply", .timeLimit(.hangGuard))
struct AdvisoryFeedStoreTests {
    static let admin = try! Principal(osUser: "alice")
    static let key = Curve25519.Signing.PrivateKey()
    static let publicKey = key.publicKey.rawRepresentation.base64EncodedString()
    static let now = Date(timeIntervalSince1970: 1_796_000_000)

    /// An OSV document of the calendar plug-in.
    static func osv(
        _ id: String, modified: String = "2026-11-20T10:00:00Z", severity: String = "CRITICAL",
        events: String = #"{"introduced": "1.2.0"}, {"fixed": "1.4.2"}"#, withdrawn: String? = nil, ecosystem: String = "Plugboard"
    ) -> String {
        """
        {"id": "\(id)", "modified": "\(modified)",\(withdrawn.map { " \"withdrawn\": \"\($0)\"," } ?? "") \
        "database_specific": {"severity": "\(severity)"}, "summary": "\(id) summary", \
        "affected": [{"package": {"ecosystem": "\(ecosystem)", "name": "com.example.calendar"}, \
        "ranges": [{"type": "SEMVER", "events": [\(events)]}]}]}
        """
    }

    /// A feed's envelope: `documents` at `sequence`, expiring `expiresIn` seconds after ``now``.
    static func feed(
        _ documents: [String], sequence: Int64, previous: String? = nil, expiresIn: TimeInterval = 86400, ecosystem: String = "Plugboard",
        keys: [Curve25519.Signing.PrivateKey] = [key]
    ) throws -> Data {
        let content = AdvisoryFeedContent(
            type: AdvisoryFeed.contentType, ecosystem: ecosystem, sequence: sequence, published: Timestamp.format(now),
            expires: Timestamp.format(now.addingTimeInterval(expiresIn)), previousHead: previous,
            head: AdvisoryFeed.head(sequence: sequence, previousHead: previous, documents: documents), documents: documents)
        return try AdvisoryFeed.envelope(content, signedBy: keys)
    }

    /// A board with the calendar's versions (``AdvisoryStoreTests/board()``) subscribed to the feed `vendor`.
    static func subscribed() throws -> Board {
        let board = try AdvisoryStoreTests.board()
        _ = try board.subscribeAdvisoryFeed(
            name: "vendor", url: "https://advisories.example.com/feed.json", keys: [publicKey], intervalSeconds: 3600, by: admin)
        return board
    }

    /// Opens and applies `data` as the feed `vendor`, as the feed's principal.
    @discardableResult
    static func apply(_ board: Board, _ data: Data) throws(BoardError) -> ChangeResult {
        let subscription = try board.advisoryFeed("vendor")
        let verified = try AdvisoryFeed.open(data, trusting: subscription.keys, now: now)
        return try board.applyAdvisoryFeed("vendor", verified, by: Board.advisoryFeedActor(subscription))
    }

    static func rows(_ board: Board) throws -> Int { try board.auditRecords(AuditQuery()).count }

    /// Expects `data` refused with a sentence containing `words`, and the board left as it was.
    static func expectRefused(_ board: Board, _ data: Data, _ words: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = (try board.advisories(affecting: false), try rows(board), try board.advisoryFeed("vendor"))
        let error = #expect(throws: BoardError.self, sourceLocation: sourceLocation) { try apply(board, data) }
        #expect(error?.message.contains(words) == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
        #expect(error?.message.contains("\n") == false, sourceLocation: sourceLocation)
        #expect(try board.advisories(affecting: false) == before.0, sourceLocation: sourceLocation)
        #expect(try rows(board) == before.1, sourceLocation: sourceLocation)
        #expect(try board.advisoryFeed("vendor") == before.2, sourceLocation: sourceLocation)
    }

    @Test func aFreshFeedIsImportedAsTheFeedWithItsHeadInTheAuditLog() throws {
        let board = try Self.subscribed()
        let data = try Self.feed([Self.osv("PBSA-1"), Self.osv("PBSA-2", severity: "LOW")], sequence: 10)
        let result = try Self.apply(board, data)
        #expect(result.changed && result.message.contains("imported 2 advisories: PBSA-1, PBSA-2"), "\(result.message)")
        let detail = try board.advisory("PBSA-1")
        #expect(detail.source == "feed vendor" && detail.importedBy == Board.advisoryFeedPrincipal)
        #expect(detail.actions.first { $0.environment == "production" }?.action == .stop)
        let head = try #require(try board.advisoryFeed("vendor").head)
        let row = try #require(try board.auditRecords(AuditQuery()).max { $0.seq < $1.seq })
        #expect(row.action == AuditAction.advisoryFeedApply.name && row.by == Board.advisoryFeedPrincipal)
        #expect(row.afterJSON?.contains(head) == true && row.afterJSON?.contains("\"sequence\":10") == true, "\(row.afterJSON ?? "")")
        // The same feed again: unchanged, nothing written.
        let rows = try Self.rows(board)
        #expect(try Self.apply(board, data).changed == false)
        #expect(try Self.rows(board) == rows)
    }

    @Test func aForgedAnUnknownKeyAndAnotherEcosystemAreRefusedAndChangeNothing() throws {
        let board = try Self.subscribed()
        try Self.apply(board, try Self.feed([Self.osv("PBSA-1")], sequence: 1))
        // Forged: the payload altered after signing (PBSA-1 withdrawn), the signature kept.
        let good = try Self.feed([Self.osv("PBSA-1", modified: "2026-11-21T10:00:00Z", withdrawn: "2026-11-21T10:00:00Z")], sequence: 2)
        var envelope = try JSONDecoder().decode(AdvisoryFeedEnvelope.self, from: good)
        var payload = try #require(Data(base64Encoded: envelope.payload))
        payload.append(contentsOf: Array(" ".utf8))
        envelope = AdvisoryFeedEnvelope(
            payloadType: envelope.payloadType, payload: payload.base64EncodedString(), signatures: envelope.signatures)
        try Self.expectRefused(board, try JSONEncoder().encode(envelope), "does not verify")
        // Signed by a key the subscription does not trust.
        try Self.expectRefused(
            board,
            try Self.feed([Self.osv("PBSA-1", withdrawn: "2026-11-21T10:00:00Z")], sequence: 3, keys: [Curve25519.Signing.PrivateKey()]),
            "signed by no key this subscription trusts")
        // Another ecosystem, signed by the trusted key.
        try Self.expectRefused(
            board, try Self.feed([Self.osv("PBSA-9")], sequence: 4, ecosystem: "npm"), "for the ecosystem 'npm', not Plugboard")
        // Not an envelope at all.
        try Self.expectRefused(board, Data("<html>hello</html>".utf8), "not a signed advisory feed")
        // What it stopped stays stopped.
        #expect(try board.advisory("PBSA-1").actions.first { $0.environment == "production" }?.action == .stop)
    }

    @Test func aReplayedOlderFeedIsRefusedAndASecondSignatureIsEnough() throws {
        let board = try Self.subscribed()
        let first = try Self.feed([Self.osv("PBSA-1")], sequence: 5)
        // Two signatures, one by a key the board does not know: the trusted one suffices.
        let second = try Self.feed(
            [Self.osv("PBSA-1"), Self.osv("PBSA-2")], sequence: 6, keys: [Curve25519.Signing.PrivateKey(), Self.key])
        try Self.apply(board, first)
        try Self.apply(board, second)
        try Self.expectRefused(board, first, "below the 6 this board applied last")
        // The same sequence with another head is a replay too.
        try Self.expectRefused(board, try Self.feed([Self.osv("PBSA-3")], sequence: 6), "the same as the 6")
    }

    @Test func anExpiredFeedAppliesWhatStopsAndSkipsWhatWouldLetMoreRun() throws {
        let board = try Self.subscribed()
        let first = try Self.feed(
            [Self.osv("PBSA-1"), Self.osv("PBSA-2"), Self.osv("PBSA-3", severity: "HIGH"), Self.osv("PBSA-4", severity: "MODERATE")],
            sequence: 1)
        try Self.apply(board, first)
        let head = try #require(try board.advisoryFeed("vendor").head)
        let later = "2026-11-25T10:00:00Z"
        let expired = try Self.feed(
            [
                Self.osv("PBSA-1", modified: later, withdrawn: later),  // withdrawn: would allow
                Self.osv("PBSA-2", modified: later, events: #"{"introduced": "1.2.0"}, {"last_affected": "1.3.0"}"#),  // narrowed
                Self.osv("PBSA-3", modified: later, severity: "MODERATE"),  // lowered
                Self.osv("PBSA-4", modified: later, severity: "CRITICAL", events: #"{"introduced": "0"}"#),  // raised and widened
                Self.osv("PBSA-5", modified: later),  // new
            ], sequence: 2, previous: head, expiresIn: -60)
        let result = try Self.apply(board, expired)
        #expect(result.message.contains("imported 2 advisories: PBSA-4, PBSA-5"), "\(result.message)")
        let note = result.notes.joined(separator: " ")
        #expect(note.contains("PBSA-1 (withdrawn by its publisher)"), "\(note)")
        #expect(note.contains("PBSA-2 (no longer affects com.example.calendar 1.3.1-0)"), "\(note)")
        #expect(note.contains("PBSA-3 (lowers its severity from high to medium)"), "\(note)")
        #expect(try board.advisory("PBSA-1").withdrawn == nil)
        #expect(try board.advisory("PBSA-4").severity == .critical && board.advisory("PBSA-5").severity == .critical)
        let row = try #require(try board.auditRecords(AuditQuery()).max { $0.seq < $1.seq })
        #expect(
            row.afterJSON?.contains("\"expired\":true") == true && row.afterJSON?.contains("\"gap\":false") == true,
            "\(row.afterJSON ?? "")")
        // A fresh feed later applies the withdrawal.
        let fresh = try Self.feed([Self.osv("PBSA-1", modified: later, withdrawn: later)], sequence: 3, previous: "0000")
        let applied = try Self.apply(board, fresh)
        #expect(applied.message.contains("PBSA-1") && applied.notes.contains { $0.contains("never received") }, "\(applied)")
        #expect(try board.advisory("PBSA-1").withdrawn != nil)
    }

    @Test func whereApprovalsAreRequiredAFeedAppliesWhatStopsAndSkipsWhatWouldLetMoreRun() throws {
        let board = try Self.subscribed()
        try Self.apply(board, try Self.feed([Self.osv("PBSA-1"), Self.osv("PBSA-2")], sequence: 1))
        let head = try #require(try board.advisoryFeed("vendor").head)
        _ = try board.setApprovalPolicy(approvals: 1, signed: nil, environment: "default", by: Self.admin)
        let later = "2026-11-25T10:00:00Z"
        let fresh = try Self.feed(
            [
                Self.osv("PBSA-1", modified: later, events: #"{"introduced": "1.3.0"}, {"fixed": "1.4.2"}"#),  // narrowed
                Self.osv("PBSA-2", modified: later, events: #"{"introduced": "0"}"#),  // widened: stops more
            ], sequence: 2, previous: head)
        let result = try Self.apply(board, fresh)
        #expect(result.message.contains("imported 1 advisory: PBSA-2"), "\(result.message)")
        let note = result.notes.joined(separator: " ")
        #expect(note.contains("requires approvals") && note.contains("PBSA-1 (no longer affects com.example.calendar 1.2.0)"), "\(note)")
        #expect(try board.advisory("PBSA-1").modified == "2026-11-20T10:00:00Z")
        // Nothing the feed applied waits for approvals, so the log holds to the policy.
        let verified = try board.verifyAudit(widening: WideningActions([.advisoryImport: true]))
        #expect(verified.problems.isEmpty, "\(verified.problems)")
    }

    @Test func auditVerifyNamesALooseningImportNoChangeRequestCovers() throws {
        let board = try AdvisoryStoreTests.board()
        _ = try board.importAdvisories([(Self.osv("PBSA-1"), "a.json")], by: Self.admin)
        _ = try board.setApprovalPolicy(approvals: 1, signed: nil, environment: "default", by: Self.admin)
        let later = "2026-11-25T10:00:00Z"
        // Raising never waits; a loosening text imported past the operations (which would have opened a change request)
        // is named.
        _ = try board.importAdvisories([(Self.osv("PBSA-1", modified: later, events: #"{"introduced": "0"}"#), "b.json")], by: Self.admin)
        let widening = WideningActions([.advisoryImport: true])
        #expect(try board.verifyAudit(widening: widening).problems.isEmpty)
        _ = try board.importAdvisories(
            [(Self.osv("PBSA-1", modified: "2026-11-26T10:00:00Z", severity: "LOW"), "c.json")], by: Self.admin)
        let loosening = try #require(try board.auditRecords(AuditQuery()).max { $0.seq < $1.seq })
        #expect(loosening.afterJSON?.contains("\"loosens\":\"lowers its severity from critical to low\"") == true, "\(loosening)")
        let problems = try board.verifyAudit(widening: widening).problems
        #expect(problems.count == 1 && problems.first?.contains("advisory.import board-wide") == true, "\(problems)")
    }

    @Test func wideningIsFoundAtEveryVersionWhereTwoRangeSetsCanDiffer() throws {
        func stored(_ text: String) throws -> (StoredAdvisory, [String: [AdvisoryRange]]) {
            let document = try OSVDocument.parse(text, file: "old")
            let advisory = StoredAdvisory(
                id: document.id, modified: document.modified, published: nil, withdrawn: document.withdrawn, aliases: [],
                summary: nil, severity: document.severity, raw: text, source: "file old", importedAt: "", importedBy: "",
                withdrawnAt: nil, withdrawnBy: nil, withdrawReason: nil)
            return (advisory, document.affected)
        }
        func widens(_ old: String, _ new: String) throws -> String? {
            let (advisory, ranges) = try stored(Self.osv("A", events: old))
            return AdvisoryFeedQueries.widening(
                advisory, ranges: ranges, to: try OSVDocument.parse(Self.osv("A", events: new), file: "new"))
        }
        #expect(try widens(#"{"introduced": "1.2.0"}, {"fixed": "1.4.2"}"#, #"{"introduced": "1.0.0"}, {"fixed": "2.0.0"}"#) == nil)
        #expect(try widens(#"{"introduced": "1.2.0"}, {"fixed": "1.4.2"}"#, #"{"introduced": "1.2.0"}, {"fixed": "1.4.1"}"#) != nil)
        // Affected again from 2.0.0, but no longer between 1.0.0 and 2.0.0: found just after 1.0.0.
        #expect(
            try widens(
                #"{"introduced": "0"}, {"fixed": "3.0.0"}"#, #"{"introduced": "0"}, {"last_affected": "1.0.0"}, {"introduced": "2.0.0"}"#)
                == "no longer affects com.example.calendar 1.0.1-0")
        #expect(try widens(#"{"introduced": "1.0.0"}"#, #"{"introduced": "0"}"#) == nil)
    }
}
