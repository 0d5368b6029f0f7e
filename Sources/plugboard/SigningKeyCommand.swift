import ArgumentParser
import Crypto
import Foundation
import PlugboardModel
import PlugboardStore

/// `plugboard signing-key …`: publisher keys, kept in files outside the board.
struct SigningKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signing-key", abstract: "Make an Ed25519 key to sign plug-in releases with (it never enters the board).",
        subcommands: [Generate.self])

    struct Generate: BoardCommand {
        /// Reads and writes local files only: it runs the same with --server.
        static let localOnly: String? = nil
        static let configuration = CommandConfiguration(
            commandName: "generate", abstract: "Write a new Ed25519 private key to a file (mode 0600) and print its public key and key id.",
            discussion: """
                The key id is the first 8 bytes of the SHA-256 of the raw 32-byte public key, in hex. Give the public key to the
                plug-in's owners (plugboard signer add ID PUBLIC_KEY); keep the private key file off the board and out of version
                control. An existing file is never overwritten.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: ArgumentHelp("Where to write the private key (must not exist).", valueName: "file")) var out: String

        func execute(_ output: Output) throws(BoardError) {
            let key = Curve25519.Signing.PrivateKey()
            try SigningKeyFile.write(key, to: out)
            let publicKey = key.publicKey.rawRepresentation
            let keyID = SigningKeys.keyID(publicKey: publicKey)
            if output.json {
                print(SigningKeyFile.json(["keyID": keyID, "publicKey": publicKey.base64EncodedString()]))
                return
            }
            print("Wrote a new Ed25519 private key to \(out) (mode 0600); keep it off the board and out of version control.")
            print("key id:     \(keyID)")
            print("public key: \(publicKey.base64EncodedString())")
            print("Owners trust it with: plugboard signer add PLUGIN_ID \(publicKey.base64EncodedString())")
        }
    }
}

/// The private key file: a header line, the base64 of the key's raw 32 bytes, a footer line; mode 0600.
enum SigningKeyFile {
    static let header = "-----BEGIN PLUGBOARD ED25519 PRIVATE KEY-----"
    static let footer = "-----END PLUGBOARD ED25519 PRIVATE KEY-----"
    /// The largest key file read.
    static let limit = 4 << 10

    /// Writes `key` to a new file with mode 0600; refuses an existing path.
    static func write(_ key: Curve25519.Signing.PrivateKey, to path: String) throws(BoardError) {
        let text = Data("\(header)\n\(key.rawRepresentation.base64EncodedString())\n\(footer)\n".utf8)
        do { try PrivateFile.create(path, text) } catch  where error.code == .conflict {
            throw BoardError(.conflict, "\(path) already exists; a key file is never overwritten, so choose another --out")
        } catch {
            throw BoardError(.io, "cannot write the key file: \(error.message)")
        }
    }

    /// Reads a private key file, refusing one that other users can read.
    static func read(_ path: String) throws(BoardError) -> Curve25519.Signing.PrivateKey {
        if let mode = BoundedInput.regularFilePermissions(path), mode & 0o077 != 0 {
            throw BoardError(
                .invalidInput, "the signing key \(path) is readable by other users (mode \(String(mode, radix: 8))); run chmod 600 \(path)")
        }
        let data = try BoundedInput.read(path: path, limit: limit, what: "signing key")
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard lines.count == 3, lines[0] == header, lines[2] == footer, let raw = Data(base64Encoded: lines[1]), raw.count == 32,
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)
        else {
            throw BoardError(
                .invalidInput, "\(path) is not a Plugboard signing key; make one with plugboard signing-key generate --out FILE")
        }
        return key
    }

    /// A flat JSON object with exactly these keys (no snake_case conversion: the contract spells keyID, publicKey).
    static func json(_ fields: [String: String?]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(fields)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
