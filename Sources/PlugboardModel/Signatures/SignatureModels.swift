public import Crypto
public import Foundation
import PlugboardVersioning

/// Whether hosts in an environment need signed releases.
public enum SignaturePolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Signatures are not checked (the default, so that boards from before signatures keep working).
    case off
    /// Releases load, and a signature problem is reported (load report, host events).
    case warn
    /// A release loads only with a valid signature by a trusted, unrevoked key.
    case require

    /// `off` 0, `warn` 1, `require` 2: a higher policy lets fewer releases load.
    package var strictness: Int {
        switch self {
        case .off: 0
        case .warn: 1
        case .require: 2
        }
    }
}

/// Ed25519 publisher keys as the board names them.
///
/// A key's id is the first 8 bytes of the SHA-256 of its raw 32-byte public key, in lower-case hex (16
/// characters): short enough to read, long enough that two keys of one board do not collide by chance.
/// Public keys travel as the base64 of their raw 32 bytes.
public enum SigningKeys {
    /// The only signature algorithm: Ed25519 (swift-crypto's `Curve25519.Signing`).
    public static let algorithm = "ed25519"

    /// The key id of a raw public key.
    public static func keyID(publicKey: Data) -> String {
        String(SHA256.hash(data: publicKey).hex.prefix(16))
    }

    /// Parses the base64 of a raw 32-byte Ed25519 public key.
    ///
    /// - Throws: ``BoardError`` `.invalidInput` naming what is wrong (never echoing more than a short prefix).
    public static func publicKey(base64 text: String) throws(BoardError) -> Curve25519.Signing.PublicKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let raw = Data(base64Encoded: trimmed), raw.count == 32,
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
        else {
            throw .invalid(
                "'\(Validate.printable(String(trimmed.prefix(60))))' is not an Ed25519 public key: give the base64 of its 32 bytes, as plugboard signing-key generate prints it"
            )
        }
        return key
    }

    /// Checks that `text` is a key id: 16 lower-case hex digits.
    public static func validateKeyID(_ text: String) throws(BoardError) {
        guard text.utf8.count == 16, text.utf8.allSatisfy(isLowerHex) else {
            throw .invalid(
                "'\(Validate.printable(String(text.prefix(60))))' is not a key id: a key id is 16 lower-case hex digits, as plugboard signer list shows"
            )
        }
    }

    package static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

/// What a signature covers: one release, exactly.
///
/// Its canonical text, the bytes that are signed (UTF-8), is five lines, each ending with a newline:
///
/// ```
/// plugboard-release-v1
/// id=com.example.greeter
/// version=1.0.0
/// manifest-sha256=<SHA-256 of the manifest bytes as registered, lower-case hex>
/// artifact-sha256=<SHA-256 of the artifact, lower-case hex, or none>
/// ```
public struct ReleaseStatement: Sendable, Hashable, Codable {
    /// The first line of the canonical text.
    public static let header = "plugboard-release-v1"

    /// The plug-in id.
    public let pluginID: String
    /// The version, as registered.
    public let version: String
    /// SHA-256 of the manifest's bytes as the board stores them, lower-case hex.
    public let manifestSHA256: String
    /// SHA-256 of the artifact, lower-case hex; nil for a release without one (compiled in).
    public let artifactSHA256: String?

    /// The statement of a manifest as it would be registered, with the artifact's SHA-256 (nil: none).
    public init(manifest: PluginManifest, artifactSHA256: String?) {
        self.init(
            pluginID: manifest.id, version: manifest.version.description, manifestSHA256: Self.manifestSHA256(manifest.source),
            artifactSHA256: artifactSHA256)
    }

    /// The SHA-256 of a manifest's text as the board stores it (`plugin_versions.manifest_json`).
    public static func manifestSHA256(_ manifestText: String) -> String {
        SHA256.hex(Data(manifestText.utf8))
    }

    /// `id@version`.
    public var release: String { "\(pluginID)@\(version)" }

    /// The canonical text: what is signed.
    public var text: String {
        "\(Self.header)\nid=\(pluginID)\nversion=\(version)\nmanifest-sha256=\(manifestSHA256)\nartifact-sha256=\(artifactSHA256 ?? "none")\n"
    }

    /// A value with each stored property given.
    public init(pluginID: String, version: String, manifestSHA256: String, artifactSHA256: String?) {
        self.pluginID = pluginID
        self.version = version
        self.manifestSHA256 = manifestSHA256
        self.artifactSHA256 = artifactSHA256
    }

    /// Parses a canonical text; nil unless it is exactly the canonical text of a statement.
    public init?(text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard text.utf8.count <= 2048, lines.count == 6, lines[0] == Self.header, lines[5].isEmpty else { return nil }
        func value(_ line: Substring, _ key: String) -> String? {
            line.hasPrefix(key + "=") ? String(line.dropFirst(key.count + 1)) : nil
        }
        guard let id = value(lines[1], "id"), let version = value(lines[2], "version"),
            let manifest = value(lines[3], "manifest-sha256"), let artifact = value(lines[4], "artifact-sha256")
        else { return nil }
        func isDigest(_ text: String) -> Bool { text.utf8.count == 64 && text.utf8.allSatisfy(SigningKeys.isLowerHex) }
        guard (try? Validate.pluginID(id)) != nil, !version.isEmpty, isDigest(manifest), artifact == "none" || isDigest(artifact)
        else { return nil }
        self.init(pluginID: id, version: version, manifestSHA256: manifest, artifactSHA256: artifact == "none" ? nil : artifact)
        guard self.text == text else { return nil }
    }
}

/// A signature of a release: the content of a signature file (`plugboard plugin sign`) and of a row of
/// `release_signatures`.
///
/// The file is small JSON: `{"algorithm": "ed25519", "keyID": …, "publicKey": …, "statement": …, "signature": …}`,
/// the public key and the signature in base64. The public key is carried so that the signature can be checked when
/// it is stored; hosts check it against the *trusted* key of the same id (`plugboard signer add`), never against
/// the one the file carries.
public struct ReleaseSignature: Sendable, Hashable, Codable {
    /// The signer's key id (``SigningKeys/keyID(publicKey:)``).
    public let keyID: String
    /// Always `ed25519`.
    public let algorithm: String
    /// The signer's public key, base64 of its raw 32 bytes.
    public let publicKey: String
    /// The canonical text of the ``ReleaseStatement`` signed.
    public let statement: String
    /// The Ed25519 signature of the statement's UTF-8 bytes, base64.
    public let signature: String

    /// The largest signature file read.
    public static let maximumSize = 16 << 10

    /// Signs `statement` with `key`.
    public static func sign(_ statement: ReleaseStatement, with key: Curve25519.Signing.PrivateKey) throws(BoardError) -> ReleaseSignature {
        let text = statement.text
        let signature: Data
        do { signature = try key.signature(for: Data(text.utf8)) } catch {
            throw BoardError(.io, "the signature could not be computed (\(error)); nothing was written")
        }
        let publicKey = key.publicKey.rawRepresentation
        return ReleaseSignature(
            keyID: SigningKeys.keyID(publicKey: publicKey), algorithm: SigningKeys.algorithm, publicKey: publicKey.base64EncodedString(),
            statement: text, signature: signature.base64EncodedString())
    }

    /// Parses a signature file and checks it: the algorithm, that the key id is the public key's, that the statement
    /// is canonical, and that the signature verifies with the public key the file carries.
    ///
    /// - Throws: ``BoardError`` `.invalidInput`, one sentence naming the problem.
    public static func parse(_ data: Data, named name: String) throws(BoardError) -> ReleaseSignature {
        guard data.count <= maximumSize else { throw .invalid("the signature file \(name) is larger than 16 KiB") }
        let file: ReleaseSignature
        do { file = try JSONDecoder().decode(ReleaseSignature.self, from: data) } catch {
            throw .invalid(
                "\(name) is not a Plugboard signature file (JSON with algorithm, keyID, publicKey, statement and signature); make one with plugboard plugin sign"
            )
        }
        guard file.algorithm == SigningKeys.algorithm else {
            throw .invalid(
                "the signature file \(name) uses the algorithm '\(Validate.printable(String(file.algorithm.prefix(40))))'; only ed25519 is accepted"
            )
        }
        let key = try SigningKeys.publicKey(base64: file.publicKey)
        guard SigningKeys.keyID(publicKey: key.rawRepresentation) == file.keyID else {
            throw .invalid(
                "the signature file \(name) names key \(Validate.printable(String(file.keyID.prefix(40)))), which is not the id of the public key it carries"
            )
        }
        guard ReleaseStatement(text: file.statement) != nil else {
            throw .invalid(
                "the statement in the signature file \(name) is not a canonical release statement; sign the release again with plugboard plugin sign"
            )
        }
        guard file.verifies(with: key) else {
            throw .invalid("the signature in \(name) does not verify with key \(file.keyID): the file was altered after signing")
        }
        return file
    }

    /// The signed statement, nil when the text is not canonical.
    public var release: ReleaseStatement? { ReleaseStatement(text: statement) }

    /// A value with each stored property given.
    package init(keyID: String, algorithm: String, publicKey: String, statement: String, signature: String) {
        self.keyID = keyID
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.statement = statement
        self.signature = signature
    }

    /// Whether the signature verifies over the statement with `key`.
    public func verifies(with key: Curve25519.Signing.PublicKey) -> Bool {
        guard let bytes = Data(base64Encoded: signature), bytes.count == 64 else { return false }
        return key.isValidSignature(bytes, for: Data(statement.utf8))
    }

    /// The file's bytes: pretty JSON with sorted keys and a final newline.
    public func fileData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return ((try? encoder.encode(self)) ?? Data()) + Data("\n".utf8)
    }
}

/// A key trusted to sign one plug-in's releases, or every plug-in's.
public struct Signer: Sendable, Hashable, Codable {
    /// What `pluginID` holds for a key trusted for every plug-in.
    public static let everyPlugin = "*"

    /// The key id.
    public let keyID: String
    /// The plug-in the key is trusted for, or `*` for every plug-in.
    public let pluginID: String
    /// The public key, base64 of its raw 32 bytes.
    public let publicKey: String
    /// Who the key belongs to, for people.
    public let name: String?
    public let addedAt: String
    public let addedBy: String
    /// When the key was revoked (nil while it is trusted).
    public let revokedAt: String?
    public let revokedBy: String?
    public let revokeReason: String?

    /// A value with each stored property given.
    package init(
        keyID: String, pluginID: String, publicKey: String, name: String?, addedAt: String, addedBy: String, revokedAt: String?,
        revokedBy: String?, revokeReason: String?
    ) {
        self.keyID = keyID
        self.pluginID = pluginID
        self.publicKey = publicKey
        self.name = name
        self.addedAt = addedAt
        self.addedBy = addedBy
        self.revokedAt = revokedAt
        self.revokedBy = revokedBy
        self.revokeReason = revokeReason
    }
}

/// The trusted and revoked keys a signature check relies on, read in one transaction.
public struct SignerTrust: Sendable, Hashable, Codable {
    /// One trusted key: its public key and the plug-ins it is trusted for.
    public struct TrustedKey: Sendable, Hashable, Codable {
        /// Base64 of the raw 32-byte public key.
        public let publicKey: String
        /// Plug-in ids, or `*` for every plug-in.
        public let plugins: Set<String>

        /// Creates a value from its fields.
        package init(publicKey: String, plugins: Set<String>) {
            self.publicKey = publicKey
            self.plugins = plugins
        }
    }

    /// Trusted keys by key id.
    public let keys: [String: TrustedKey]
    /// Revoked keys by key id, with the reason.
    public let revoked: [String: String]

    /// Creates a value from its fields.
    package init(keys: [String: TrustedKey], revoked: [String: String]) {
        self.keys = keys
        self.revoked = revoked
    }

    /// No key trusted, none revoked.
    public static let empty = SignerTrust(keys: [:], revoked: [:])
}

/// A release's signature level, like Grafana's: what a host under `require` makes of its signatures.
public enum SignatureState: String, Sendable, Hashable, Codable, CaseIterable {
    /// At least one signature by a trusted, unrevoked key verifies and covers exactly this release.
    case valid
    /// The release carries no signature.
    case unsigned
    /// Signed, but by no key trusted for this plug-in.
    case untrusted
    /// Signed by a trusted key that was revoked.
    case revoked
    /// The signature covers this id and version, but another manifest or artifact: modified after signing.
    case modified
    /// The signature covers another release (replayed from another version or plug-in).
    case otherRelease = "other-release"
    /// The signature does not verify with the trusted key (the stored signature was altered).
    case invalid
}

/// The signature level of one release, with the keys involved and one sentence for people.
public struct SignatureVerdict: Sendable, Hashable, Codable {
    /// The level.
    public let state: SignatureState
    /// The keys of the valid signatures (state valid), or of the signature the problem is about.
    public let keyIDs: [String]
    /// One sentence, for example "signed by key 3f1c… (trusted for com.example.greeter)".
    public let message: String
}
