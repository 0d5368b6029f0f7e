public import Crypto
public import Foundation

/// What the board's own key signs for remote hosts: which board state a snapshot (or a freshness notice)
/// is, for which environment, until when, and the digest of its content.
///
/// Its canonical text, the bytes that are signed (UTF-8), is ten lines, each ending with a newline:
///
/// ```
/// plugboard-snapshot-v1
/// environment=production
/// seq=<the audit log's head: sequence number>
/// head=<its hash>
/// root=<its state root, or none>
/// issued-at=<milliseconds since 1970-01-01T00:00:00Z>
/// expires-at=<milliseconds since 1970-01-01T00:00:00Z>
/// content-sha256=<SHA-256 of the snapshot's JSON, or none for a freshness notice>
/// board-keys=<the board's public keys, base64, separated by commas: the current one first>
/// ```
///
/// A host trusts the statement only when a key it was given (or learned from an earlier statement signed by one it
/// trusted) signed it; it refuses one older than its anchor, and reports a snapshot past `expires-at` as stale.
public struct SnapshotStatement: Sendable, Hashable {
    /// The first line of the canonical text.
    public static let header = "plugboard-snapshot-v1"

    /// The environment the snapshot describes.
    public let environment: String
    /// The audit log's head the snapshot was read at (sequence 0 and the genesis hash for an empty log).
    public let head: AuditCheckpoint
    /// When the server signed it.
    public let issuedAt: Date
    /// After this, the host reports its snapshot as stale until a newer statement arrives.
    public let expiresAt: Date
    /// SHA-256 of the snapshot's JSON; nil for a freshness notice, which vouches for the snapshot of the same head.
    public let contentSHA256: String?
    /// The board's public keys (base64 of the raw 32 bytes), the current one first: hosts follow a key rotation by
    /// learning the new key from a statement the old one signed.
    public let boardKeys: [String]

    /// The canonical text: what is signed.
    public var text: String {
        """
        \(Self.header)
        environment=\(environment)
        seq=\(head.seq)
        head=\(head.hash)
        root=\(head.stateRoot ?? "none")
        issued-at=\(Self.milliseconds(issuedAt))
        expires-at=\(Self.milliseconds(expiresAt))
        content-sha256=\(contentSHA256 ?? "none")
        board-keys=\(boardKeys.joined(separator: ","))

        """
    }

    /// A value with each stored property given.
    public init(environment: String, head: AuditCheckpoint, issuedAt: Date, expiresAt: Date, contentSHA256: String?, boardKeys: [String]) {
        self.environment = environment
        self.head = head
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.contentSHA256 = contentSHA256
        self.boardKeys = boardKeys
    }

    /// A time as whole milliseconds since 1970: exact both ways, unlike a decimal fraction of seconds.
    package static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// Parses a canonical text; nil unless it is exactly the canonical text of a statement.
    public init?(text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard text.utf8.count <= 8192, lines.count == 10, lines[0] == Self.header, lines[9].isEmpty else { return nil }
        let keys = ["environment", "seq", "head", "root", "issued-at", "expires-at", "content-sha256", "board-keys"]
        var values: [String] = []
        for (line, key) in zip(lines[1...8], keys) {
            guard line.hasPrefix(key + "=") else { return nil }
            values.append(String(line.dropFirst(key.count + 1)))
        }
        func isDigest(_ text: String) -> Bool { text.utf8.count == 64 && text.utf8.allSatisfy(SigningKeys.isLowerHex) }
        guard let seq = Int64(values[1]), seq >= 0, isDigest(values[2]), values[3] == "none" || isDigest(values[3]),
            let issued = Int64(values[4]), let expires = Int64(values[5]),
            values[6] == "none" || isDigest(values[6])
        else { return nil }
        self.init(
            environment: values[0], head: AuditCheckpoint(seq: seq, hash: values[2], stateRoot: values[3] == "none" ? nil : values[3]),
            issuedAt: Date(timeIntervalSince1970: Double(issued) / 1000), expiresAt: Date(timeIntervalSince1970: Double(expires) / 1000),
            contentSHA256: values[6] == "none" ? nil : values[6],
            boardKeys: values[7].isEmpty ? [] : values[7].split(separator: ",").map(String.init))
        guard self.text == text else { return nil }
    }
}

/// A statement with the board's signatures, and for a snapshot its content: what `GET /api/host/snapshot` answers,
/// what the host stream's `fresh` events carry (without content), and what a host keeps in its cache.
///
/// JSON: `{"statement": TEXT, "signatures": [{"keyID": …, "signature": BASE64}], "content": BASE64 or absent}`.
public struct SignedSnapshot: Sendable, Hashable, Codable {
    /// One signature of the statement's text.
    public struct Signature: Sendable, Hashable, Codable {
        /// The id of the board key (``SigningKeys/keyID(publicKey:)``).
        public let keyID: String
        /// The Ed25519 signature of the statement's UTF-8 bytes, base64.
        public let signature: String
    }

    /// The canonical text of the ``SnapshotStatement``.
    public let statement: String
    /// Its signatures, one per key of the board's keyring.
    public let signatures: [Signature]
    /// The snapshot's JSON (a ``HostView``), base64; nil for a freshness notice.
    public let content: String?

    /// A value with each stored property given.
    public init(statement: String, signatures: [Signature], content: String?) {
        self.statement = statement
        self.signatures = signatures
        self.content = content
    }

    /// The largest envelope a host reads.
    public static let maximumSize = 256 << 20

    /// Signs `statement` (and `content`, whose digest it must name) with every one of `keys` (the board key ring's).
    public static func sign(_ statement: SnapshotStatement, content: Data?, keys: [Curve25519.Signing.PrivateKey]) -> SignedSnapshot {
        sign(text: statement.text, content: content, keys: keys)
    }

    /// Signs the canonical text `text` of a statement (and carries `content`) with every one of `keys`.
    public static func sign(text: String, content: Data?, keys: [Curve25519.Signing.PrivateKey]) -> SignedSnapshot {
        let signatures = keys.map { key in
            Signature(
                keyID: SigningKeys.keyID(publicKey: key.publicKey.rawRepresentation),
                signature: ((try? key.signature(for: Data(text.utf8))) ?? Data()).base64EncodedString())
        }
        return SignedSnapshot(statement: text, signatures: signatures, content: content?.base64EncodedString())
    }

    /// The JSON sent and cached.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// Checks the envelope and returns its statement and content: signed by one of `trusted` (base64 public keys),
    /// for `environment`, and with content whose SHA-256 is the one signed.
    ///
    /// - Throws: ``BoardError`` `.integrity` with one sentence when any of it does not hold.
    public static func verify(_ data: Data, trusted: [String], environment: String) throws(BoardError) -> (
        statement: SnapshotStatement, content: Data?
    ) {
        try decode(data).verify(trusted: trusted, environment: environment)
    }

    /// Decodes an envelope (nothing is checked yet: see ``verify(trusted:environment:)``).
    public static func decode(_ data: Data) throws(BoardError) -> SignedSnapshot {
        guard data.count <= maximumSize, let envelope = try? JSONDecoder().decode(SignedSnapshot.self, from: data) else {
            throw BoardError(.integrity, "the snapshot is not a signed snapshot of a board (JSON with statement, signatures and content)")
        }
        return envelope
    }

    /// Checks that one of `trusted` (base64 public keys) signed the envelope's statement; `what` names it in the error.
    ///
    /// - Throws: ``BoardError`` `.integrity` naming the keys that signed it when none of them is trusted.
    public func checkSigned(trusted: [String], what: String) throws(BoardError) {
        let keys = Dictionary(
            trusted.compactMap { text in
                (try? SigningKeys.publicKey(base64: text)).map { (SigningKeys.keyID(publicKey: $0.rawRepresentation), $0) }
            }, uniquingKeysWith: { first, _ in first })
        let signed = signatures.contains { signature in
            guard let key = keys[signature.keyID], let bytes = Data(base64Encoded: signature.signature), bytes.count == 64 else {
                return false
            }
            return key.isValidSignature(bytes, for: Data(statement.utf8))
        }
        guard signed else {
            let ids = signatures.map(\.keyID).map { Validate.printable(String($0.prefix(16))) }.joined(separator: ", ")
            throw BoardError(
                .integrity,
                "the \(what) is not signed by the board's key this host trusts (signed by \(ids.isEmpty ? "no key" : "key " + ids)): it was altered, or comes from another board"
            )
        }
    }

    /// ``verify(_:trusted:environment:)`` of a decoded envelope.
    public func verify(trusted: [String], environment: String) throws(BoardError) -> (statement: SnapshotStatement, content: Data?) {
        let envelope = self
        guard let statement = SnapshotStatement(text: envelope.statement) else {
            throw BoardError(.integrity, "the snapshot's statement is not canonical: it was altered")
        }
        try checkSigned(trusted: trusted, what: "snapshot")
        guard statement.environment == environment else {
            throw BoardError(
                .integrity, "the snapshot is of the environment \(Validate.printable(statement.environment)), not \(environment)")
        }
        var content: Data?
        if let text = envelope.content {
            guard let bytes = Data(base64Encoded: text), statement.contentSHA256 == SHA256.hex(bytes) else {
                throw BoardError(.integrity, "the snapshot's content is not the one its statement signs: it was altered")
            }
            content = bytes
        } else if statement.contentSHA256 != nil {
            throw BoardError(.integrity, "the snapshot carries no content although its statement signs one")
        }
        return (statement, content)
    }
}
