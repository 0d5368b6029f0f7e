import Crypto
import Foundation
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Testing

/// What the board's key signs for hosts on other machines, and what a host accepts of it.
@Suite("store: signed snapshots", .timeLimit(.hangGuard))
struct SignedSnapshotTests {
    static let head = AuditCheckpoint(seq: 42, hash: String(repeating: "ab", count: 32), stateRoot: String(repeating: "cd", count: 32))

    static func statement(_ keyring: BoardKeyring, content: Data?, environment: String = "production") -> SnapshotStatement {
        SnapshotStatement(
            environment: environment, head: head, issuedAt: Date(), expiresAt: Date().addingTimeInterval(60),
            contentSHA256: content.map { SHA256.hash(data: $0).map { String(format: "%02x", $0) }.joined() }, boardKeys: keyring.publicKeys)
    }

    @Test func theStatementIsCanonicalAndParsesBack() {
        let keyring = BoardKeyring.generate()
        let statement = Self.statement(keyring, content: Data("{}".utf8))
        #expect(SnapshotStatement(text: statement.text) == statement || SnapshotStatement(text: statement.text)?.text == statement.text)
        #expect(SnapshotStatement(text: statement.text)?.text == statement.text, "\(statement.text)")
        #expect(SnapshotStatement(text: statement.text.replacingOccurrences(of: "seq=42", with: "seq=041")) == nil)
    }

    @Test func aSnapshotVerifiesOnlyWithTheBoardsKeyAndItsOwnContent() throws {
        let keyring = BoardKeyring.generate()
        let content = Data(#"{"a":1}"#.utf8)
        let envelope = SignedSnapshot.sign(Self.statement(keyring, content: content), content: content, keys: keyring.keys).encoded()
        let (statement, verified) = try SignedSnapshot.verify(envelope, trusted: keyring.publicKeys, environment: "production")
        #expect(statement.head == Self.head)
        #expect(verified == content)

        // Another board's key, another environment, another content: refused, each with its sentence.
        let other = BoardKeyring.generate()
        #expect(throws: BoardError.self) { try SignedSnapshot.verify(envelope, trusted: other.publicKeys, environment: "production") }
        #expect(throws: BoardError.self) { try SignedSnapshot.verify(envelope, trusted: keyring.publicKeys, environment: "staging") }
        var decoded = try SignedSnapshot.decode(envelope)
        decoded = SignedSnapshot(
            statement: decoded.statement, signatures: decoded.signatures, content: Data(#"{"a":2}"#.utf8).base64EncodedString())
        do {
            _ = try decoded.verify(trusted: keyring.publicKeys, environment: "production")
            Issue.record("altered content was accepted")
        } catch {
            #expect(error.message.contains("not the one its statement signs"))
        }
    }
    /// A freshness proof holds only for the nonce the host sent, the head of the snapshot it came with, the board's key
    /// and its environment, and only until it expires.
    @Test func aFreshnessProofHoldsOnlyForItsNonceAndHead() throws {
        let keyring = BoardKeyring.generate()
        let nonce = FreshnessProof.makeNonce()
        #expect(FreshnessProof.isNonce(nonce) && nonce != FreshnessProof.makeNonce())
        let proof = FreshnessProof(
            environment: "production", nonce: nonce, head: Self.head, issuedAt: Date(), expiresAt: Date().addingTimeInterval(60))
        #expect(FreshnessProof(text: proof.text)?.text == proof.text)
        #expect(FreshnessProof(text: proof.text.replacingOccurrences(of: "seq=42", with: "seq=042")) == nil)
        let header = proof.signed(keys: keyring.keys)
        func verify(
            _ value: String?, trusted: [String]? = nil, environment: String = "production", nonce: String = nonce,
            head: AuditCheckpoint = Self.head, now: Date = Date()
        ) throws(BoardError) -> FreshnessProof {
            try FreshnessProof.verify(
                value, trusted: trusted ?? keyring.publicKeys, environment: environment, nonce: nonce, head: head, now: now)
        }
        #expect(try verify(header).nonce == nonce)
        let cases: [(String, () throws(BoardError) -> FreshnessProof)] = [
            ("no freshness proof", { () throws(BoardError) in try verify(nil) }),
            ("not a signed proof", { () throws(BoardError) in try verify("bm90IGEgcHJvb2Y=") }),
            ("not signed by the board's key", { () throws(BoardError) in try verify(header, trusted: BoardKeyring.generate().publicKeys) }),
            ("another request", { () throws(BoardError) in try verify(header, nonce: FreshnessProof.makeNonce()) }),
            ("another request", { () throws(BoardError) in try verify(header, environment: "staging") }),
            (
                "not for the snapshot's row 41",
                { () throws(BoardError) in try verify(header, head: AuditCheckpoint(seq: 41, hash: Self.head.hash)) }
            ),
            ("expired at", { () throws(BoardError) in try verify(header, now: Date().addingTimeInterval(120)) }),
        ]
        for (words, attempt) in cases {
            do {
                _ = try attempt()
                Issue.record("a proof was accepted where it must say \(words)")
            } catch {
                #expect(error.code == .integrity && error.message.contains(words), "\(error.message)")
            }
        }
    }
}
