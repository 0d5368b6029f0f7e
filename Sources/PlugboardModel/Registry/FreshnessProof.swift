public import Crypto
public import Foundation

/// The board's signed word that a snapshot's head is its head now, bound to one request of one host: the host sends a
/// random nonce with its first snapshot request (`GET /api/host/snapshot?nonce=HEX`), and the server answers with the
/// snapshot and, in the header ``httpHeader``, this proof of that nonce and the snapshot's head, signed by the board's
/// keys. A proxy that kept an older snapshot cannot answer a new nonce with it: it has no key to sign the proof, and a
/// proof the server signed for the current head does not match the older snapshot's head.
///
/// Its canonical text, the bytes that are signed (UTF-8), is eight lines, each ending with a newline:
///
/// ```
/// plugboard-freshness-v1
/// environment=production
/// nonce=<the host's nonce: 32 to 128 lowercase hexadecimal digits>
/// seq=<the snapshot's audit head: sequence number>
/// head=<its hash>
/// issued-at=<milliseconds since 1970-01-01T00:00:00Z>
/// expires-at=<milliseconds since 1970-01-01T00:00:00Z>
/// ```
///
/// The header's value is the base64 of a ``SignedSnapshot`` envelope whose statement is this text (without content).
public struct FreshnessProof: Sendable, Hashable {
    /// The first line of the canonical text.
    public static let header = "plugboard-freshness-v1"
    /// The HTTP header of the snapshot answer that carries the proof.
    public static let httpHeader = "Plugboard-Freshness"

    /// The environment of the snapshot.
    public let environment: String
    /// The host's nonce.
    public let nonce: String
    /// The audit head of the snapshot the proof vouches for.
    public let head: AuditCheckpoint
    /// When the server signed it.
    public let issuedAt: Date
    /// Until when it vouches for the head.
    public let expiresAt: Date

    /// Whether `text` is a nonce: 32 to 128 lowercase hexadecimal digits.
    public static func isNonce(_ text: String) -> Bool {
        (32...128).contains(text.utf8.count) && text.utf8.allSatisfy(SigningKeys.isLowerHex)
    }

    /// A new random nonce (32 bytes, hexadecimal).
    public static func makeNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// The canonical text: what is signed.
    public var text: String {
        """
        \(Self.header)
        environment=\(environment)
        nonce=\(nonce)
        seq=\(head.seq)
        head=\(head.hash)
        issued-at=\(SnapshotStatement.milliseconds(issuedAt))
        expires-at=\(SnapshotStatement.milliseconds(expiresAt))

        """
    }

    /// A value with each stored property given.
    public init(environment: String, nonce: String, head: AuditCheckpoint, issuedAt: Date, expiresAt: Date) {
        self.environment = environment
        self.nonce = nonce
        self.head = head
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    /// Parses a canonical text; nil unless it is exactly the canonical text of a proof.
    public init?(text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard text.utf8.count <= 1024, lines.count == 8, lines[0] == Self.header, lines[7].isEmpty else { return nil }
        var values: [String] = []
        for (line, key) in zip(lines[1...6], ["environment", "nonce", "seq", "head", "issued-at", "expires-at"]) {
            guard line.hasPrefix(key + "=") else { return nil }
            values.append(String(line.dropFirst(key.count + 1)))
        }
        guard Self.isNonce(values[1]), let seq = Int64(values[2]), seq >= 0, values[3].utf8.count == 64,
            values[3].utf8.allSatisfy(SigningKeys.isLowerHex), let issued = Int64(values[4]), let expires = Int64(values[5])
        else { return nil }
        self.init(
            environment: values[0], nonce: values[1], head: AuditCheckpoint(seq: seq, hash: values[3]),
            issuedAt: Date(timeIntervalSince1970: Double(issued) / 1000), expiresAt: Date(timeIntervalSince1970: Double(expires) / 1000))
        guard self.text == text else { return nil }
    }

    /// The header value: the proof signed with every one of `keys`, as base64 of its envelope's JSON.
    public func signed(keys: [Curve25519.Signing.PrivateKey]) -> String {
        SignedSnapshot.sign(text: text, content: nil, keys: keys).encoded().base64EncodedString()
    }

    /// Checks a header value against what the host asked and read: signed by one of `trusted`, for `environment`, of
    /// this host's `nonce`, of the snapshot's `head`, and not expired.
    ///
    /// - Throws: ``BoardError`` `.integrity` with one sentence when any of it does not hold (or there is no proof).
    public static func verify(
        _ value: String?, trusted: [String], environment: String, nonce: String, head: AuditCheckpoint, now: Date = Date()
    ) throws(BoardError) -> FreshnessProof {
        guard let value else { throw BoardError(.integrity, "the answer carries no freshness proof") }
        guard value.utf8.count <= 16 << 10, let data = Data(base64Encoded: value),
            let envelope = try? JSONDecoder().decode(SignedSnapshot.self, from: data), envelope.content == nil,
            let proof = FreshnessProof(text: envelope.statement)
        else { throw BoardError(.integrity, "the freshness proof is not a signed proof of a board") }
        try envelope.checkSigned(trusted: trusted, what: "freshness proof")
        guard proof.environment == environment, proof.nonce == nonce else {
            throw BoardError(.integrity, "the freshness proof answers another request than this host's (another nonce or environment)")
        }
        guard proof.head.seq == head.seq, proof.head.hash == head.hash else {
            throw BoardError(
                .integrity, "the freshness proof vouches for audit row \(proof.head.seq), not for the snapshot's row \(head.seq)")
        }
        guard proof.expiresAt > now else {
            throw BoardError(.integrity, "the freshness proof expired at \(Timestamp.format(proof.expiresAt))")
        }
        return proof
    }
}
