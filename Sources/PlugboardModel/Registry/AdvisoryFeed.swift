public import Crypto
public import Foundation

/// A signed, expiring feed of OSV advisories, as `plugboard advisory feed publish` writes it and a subscribed board
/// reads it: a DSSE envelope (the in-toto / Sigstore signature envelope, protocol version 1).
///
/// ```json
/// {"payloadType": "application/vnd.plugboard.advisory-feed+json",
///  "payload": "<base64 of the feed's content, exactly as signed>",
///  "signatures": [{"keyid": "3f2a9c0d11b4e7a8", "sig": "<base64 of the Ed25519 signature>"}]}
/// ```
///
/// Each signature is an Ed25519 signature over DSSE's pre-authentication encoding of the payload's bytes
/// (``preAuthenticationEncoding(_:)``); `keyid` is the signing key's id (``SigningKeys/keyID(publicKey:)``). The payload
/// is never re-encoded: what is verified is the bytes that were signed, so no canonical JSON is needed. The payload is
/// an ``AdvisoryFeedContent`` in JSON.
public enum AdvisoryFeed {
    /// The envelope's `payloadType`.
    public static let payloadType = "application/vnd.plugboard.advisory-feed+json"
    /// The content's `type`.
    public static let contentType = "plugboard-advisory-feed/v1"
    /// The only ecosystem a board takes advisories for.
    public static let ecosystem = "Plugboard"
    /// The largest feed read, in bytes (16 MiB).
    public static let maximumSize = 16 << 20
    /// The most advisories one feed holds.
    public static let maximumDocuments = 10_000
    /// The most signatures one envelope carries.
    public static let maximumSignatures = 16

    /// DSSE's pre-authentication encoding, the bytes each signature covers:
    /// `"DSSEv1" SP LEN(payloadType) SP payloadType SP LEN(payload) SP payload`, lengths in ASCII decimal.
    public static func preAuthenticationEncoding(_ payload: Data) -> Data {
        var bytes = Data("DSSEv1 \(payloadType.utf8.count) \(payloadType) \(payload.count) ".utf8)
        bytes.append(payload)
        return bytes
    }

    /// The head of a feed: the SHA-256, in lower-case hex, of its canonical text, UTF-8, every line ending with a newline:
    ///
    /// ```
    /// plugboard-advisory-feed-head-v1
    /// ecosystem=Plugboard
    /// sequence=<sequence, decimal>
    /// previous=<the previous feed's head, or none>
    /// <SHA-256 of the first document's text, lower-case hex>
    /// …
    /// ```
    ///
    /// Two feeds with the same head hold the same documents in the same order after the same previous feed.
    public static func head(sequence: Int64, previousHead: String?, documents: [String]) -> String {
        var text = "plugboard-advisory-feed-head-v1\necosystem=\(ecosystem)\nsequence=\(sequence)\nprevious=\(previousHead ?? "none")\n"
        for document in documents { text += SHA256.hash(data: Data(document.utf8)).hex + "\n" }
        return SHA256.hash(data: Data(text.utf8)).hex
    }

    /// The envelope of `content`, signed by every key of `keys`, as the JSON bytes to publish.
    public static func envelope(_ content: AdvisoryFeedContent, signedBy keys: [Curve25519.Signing.PrivateKey]) throws(BoardError) -> Data {
        guard !keys.isEmpty, keys.count <= maximumSignatures else {
            throw .invalid("give 1 to \(maximumSignatures) keys (--key) to sign the feed with")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let payload = try? encoder.encode(content) else { throw .invalid("the feed's content cannot be encoded as JSON") }
        let signed = preAuthenticationEncoding(payload)
        var signatures: [AdvisoryFeedSignature] = []
        for key in keys {
            guard let signature = try? key.signature(for: signed) else { throw .invalid("a key could not sign the feed") }
            signatures.append(
                AdvisoryFeedSignature(
                    keyid: SigningKeys.keyID(publicKey: key.publicKey.rawRepresentation), sig: signature.base64EncodedString()))
        }
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let envelope = AdvisoryFeedEnvelope(payloadType: payloadType, payload: payload.base64EncodedString(), signatures: signatures)
        guard let bytes = try? encoder.encode(envelope) else { throw .invalid("the feed cannot be encoded as JSON") }
        return bytes
    }

    /// Opens a feed: checks its envelope, a signature by one of `trusted` (base64 Ed25519 public keys), its ecosystem and
    /// its head, in that order, and says whether it expired at `now`.
    ///
    /// - Throws: ``BoardError`` `.invalidInput`, one sentence that starts with "the feed": too large, not an envelope,
    ///   signed by none of the trusted keys (an unknown key), a signature by a trusted key that does not verify (a forged
    ///   or altered feed), another ecosystem, a head that does not match its documents.
    public static func open(_ data: Data, trusting trusted: [String], now: Date) throws(BoardError) -> VerifiedAdvisoryFeed {
        guard data.count <= maximumSize else { throw .invalid("the feed is larger than \(maximumSize >> 20) MiB; it was refused") }
        guard let envelope = try? JSONDecoder().decode(AdvisoryFeedEnvelope.self, from: data),
            let payload = Data(base64Encoded: envelope.payload)
        else {
            throw .invalid("the feed is not a signed advisory feed (a DSSE envelope with payloadType, payload and signatures)")
        }
        guard envelope.payloadType == payloadType else {
            throw .invalid("the feed's payloadType is '\(Validate.printable(String(envelope.payloadType.prefix(80))))', not \(payloadType)")
        }
        guard envelope.signatures.count <= maximumSignatures else {
            throw .invalid("the feed carries more than \(maximumSignatures) signatures; it was refused")
        }
        let signed = preAuthenticationEncoding(payload)
        var keyID: String?
        var forged: String?
        for text in trusted {
            let key = try SigningKeys.publicKey(base64: text)
            let id = SigningKeys.keyID(publicKey: key.rawRepresentation)
            for signature in envelope.signatures where signature.keyid == id {
                if let raw = Data(base64Encoded: signature.sig), key.isValidSignature(raw, for: signed) {
                    keyID = id
                } else {
                    forged = id
                }
            }
            if keyID != nil { break }
        }
        guard let keyID else {
            if let forged {
                throw .invalid(
                    "the feed's signature by the key \(forged) does not verify: the feed was altered or forged; nothing was changed")
            }
            let named = envelope.signatures.map { Validate.printable(String($0.keyid.prefix(64))) }.joined(separator: ", ")
            throw .invalid(
                "the feed is signed by no key this subscription trusts (it names \(named.isEmpty ? "no key" : named)); nothing was changed")
        }
        guard let content = try? JSONDecoder().decode(AdvisoryFeedContent.self, from: payload), content.type == contentType else {
            throw .invalid("the feed's signed content is not a \(contentType) document")
        }
        guard content.ecosystem == ecosystem else {
            throw .invalid(
                "the feed is for the ecosystem '\(Validate.printable(String(content.ecosystem.prefix(64))))', not \(ecosystem); nothing was changed"
            )
        }
        guard content.documents.count <= maximumDocuments else {
            throw .invalid("the feed holds more than \(maximumDocuments) advisories; it was refused")
        }
        guard content.head == head(sequence: content.sequence, previousHead: content.previousHead, documents: content.documents) else {
            throw .invalid("the feed's head does not match its documents; nothing was changed")
        }
        guard let expires = Timestamp.parse(content.expires) else {
            throw .invalid("the feed's expires is not an RFC 3339 time; nothing was changed")
        }
        return VerifiedAdvisoryFeed(content: content, keyID: keyID, expired: expires <= now)
    }
}

/// What a feed's signatures cover: the feed's content, the envelope's payload in JSON.
///
/// ```json
/// {"type": "plugboard-advisory-feed/v1", "ecosystem": "Plugboard", "sequence": 1796900000000,
///  "published": "2026-11-29T10:00:00Z", "expires": "2026-12-06T10:00:00Z", "previousHead": "…", "head": "…",
///  "documents": ["{\"schema_version\": \"1.7.0\", \"id\": \"PBSA-2026-0001\", …}"]}
/// ```
public struct AdvisoryFeedContent: Sendable, Hashable, Codable {
    /// Always ``AdvisoryFeed/contentType``.
    public let type: String
    /// Always ``AdvisoryFeed/ecosystem``.
    public let ecosystem: String
    /// Greater in every feed its publisher writes than in the one before (by default the publish time in milliseconds
    /// since 1970). A subscriber refuses a feed whose sequence is below the last one it applied.
    public let sequence: Int64
    /// When it was written (RFC 3339).
    public let published: String
    /// When it expires (RFC 3339): after that a subscriber applies only what stops or refuses more.
    public let expires: String
    /// The head of the feed its publisher wrote before this one, if any.
    public let previousHead: String?
    /// ``AdvisoryFeed/head(sequence:previousHead:documents:)`` of this feed.
    public let head: String
    /// Each OSV document's text, exactly as the publishing board holds it, in id order.
    public let documents: [String]

    /// A value with each stored property given.
    public init(
        type: String, ecosystem: String, sequence: Int64, published: String, expires: String, previousHead: String?, head: String,
        documents: [String]
    ) {
        self.type = type
        self.ecosystem = ecosystem
        self.sequence = sequence
        self.published = published
        self.expires = expires
        self.previousHead = previousHead
        self.head = head
        self.documents = documents
    }
}

/// One signature of a feed's envelope.
public struct AdvisoryFeedSignature: Sendable, Hashable, Codable {
    /// The signing key's id (``SigningKeys/keyID(publicKey:)``).
    public let keyid: String
    /// The base64 of the Ed25519 signature over the pre-authentication encoding of the payload.
    public let sig: String

    /// A value with each stored property given.
    public init(keyid: String, sig: String) {
        self.keyid = keyid
        self.sig = sig
    }
}

/// A feed as published: a DSSE envelope.
public struct AdvisoryFeedEnvelope: Sendable, Hashable, Codable {
    /// Always ``AdvisoryFeed/payloadType``.
    public let payloadType: String
    /// The base64 of the content's JSON bytes, exactly as signed.
    public let payload: String
    /// One or more signatures.
    public let signatures: [AdvisoryFeedSignature]

    /// A value with each stored property given.
    public init(payloadType: String, payload: String, signatures: [AdvisoryFeedSignature]) {
        self.payloadType = payloadType
        self.payload = payload
        self.signatures = signatures
    }
}

/// A feed whose signature, ecosystem and head were checked (``AdvisoryFeed/open(_:trusting:now:)``).
public struct VerifiedAdvisoryFeed: Sendable, Hashable {
    /// Its content.
    public let content: AdvisoryFeedContent
    /// The id of the trusted key whose signature verified.
    public let keyID: String
    /// Whether it had expired when it was opened: then only what stops or refuses more is applied.
    public let expired: Bool

    /// A value with each stored property given.
    public init(content: AdvisoryFeedContent, keyID: String, expired: Bool) {
        self.content = content
        self.keyID = keyID
        self.expired = expired
    }
}

/// A subscription to a feed, as `plugboard advisory feed list` shows it.
public struct AdvisoryFeedSubscription: Sendable, Hashable, Codable {
    /// Its name (by default the URL's host).
    public let name: String
    /// Where the feed is fetched.
    public let url: String
    /// The ids of the keys trusted to sign it.
    public let keyIDs: [String]
    /// The trusted public keys (base64 of the raw 32 bytes).
    public let keys: [String]
    /// Seconds between fetches by `plugboard serve`.
    public let intervalSeconds: Int
    /// The sequence of the last feed applied, if any.
    public let sequence: Int64?
    /// The head of the last feed applied, if any.
    public let head: String?
    /// When that feed expires.
    public let expires: String?
    /// When it was applied.
    public let appliedAt: String?

    /// A value with each stored property given.
    public init(
        name: String, url: String, keyIDs: [String], keys: [String], intervalSeconds: Int, sequence: Int64?, head: String?,
        expires: String?, appliedAt: String?
    ) {
        self.name = name
        self.url = url
        self.keyIDs = keyIDs
        self.keys = keys
        self.intervalSeconds = intervalSeconds
        self.sequence = sequence
        self.head = head
        self.expires = expires
        self.appliedAt = appliedAt
    }
}
