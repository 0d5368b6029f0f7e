import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardVersioning

/// `plugboard plugin sign` and `add-signature`: signing a release and recording a signature.
extension PluginCommand {
    struct Sign: BoardCommand {
        /// Reads and writes local files only: it runs the same with --server.
        static let localOnly: String? = nil
        static let configuration = CommandConfiguration(
            commandName: "sign", abstract: "Sign a release with your Ed25519 key: its id, version, manifest and artifact.",
            discussion: """
                Signs the canonical statement of the release (plug-in id, version, SHA-256 of the manifest bytes, SHA-256 of the \
                artifact or none) and writes a small JSON signature file (stdout without --out). Needs no board: store the \
                signature with plugboard plugin register --signature SIG or plugboard plugin add-signature ID VERSION SIG.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The manifest JSON file, exactly as it is (or will be) registered.") var manifest: String
        @Option(name: .long, help: ArgumentHelp("The release's artifact (a shared library).", valueName: "file")) var artifact: String?
        @Option(name: .long, help: ArgumentHelp("The private key file (plugboard signing-key generate).", valueName: "file")) var key:
            String
        @Option(name: .long, help: ArgumentHelp("Where to write the signature file (default: stdout).", valueName: "sig")) var out: String?

        func execute(_ output: Output) throws(BoardError) {
            let parsed = try PluginManifest.parse(
                try BoundedInput.read(path: manifest, limit: BoundedInput.manifestLimit, what: "manifest"))
            var artifactSHA256: String?
            if let artifact {
                guard BoundedInput.regularFilePermissions(artifact) != nil, let sha = FileDigest.sha256(ofFile: artifact) else {
                    throw BoardError(.invalidInput, "the artifact \(artifact) is not a readable file; check the path given to --artifact")
                }
                artifactSHA256 = sha
            }
            let statement = ReleaseStatement(manifest: parsed, artifactSHA256: artifactSHA256)
            let signature = try ReleaseSignature.sign(statement, with: try SigningKeyFile.read(key))
            guard let out else {
                FileHandle.standardOutput.write(signature.fileData())
                return
            }
            do { try signature.fileData().write(to: URL(fileURLWithPath: out)) } catch {
                throw BoardError(.io, "cannot write the signature file \(out) (\((error as NSError).localizedDescription))")
            }
            if output.json {
                print(
                    SigningKeyFile.json([
                        "keyID": signature.keyID, "release": statement.release, "manifestSHA256": statement.manifestSHA256,
                        "artifactSHA256": statement.artifactSHA256, "out": out,
                    ]))
                return
            }
            print(
                "Signed \(statement.release) with key \(signature.keyID) (manifest SHA-256 \(statement.manifestSHA256.prefix(12))…, artifact \(statement.artifactSHA256.map { "SHA-256 \($0.prefix(12))…" } ?? "none")); wrote \(out)."
            )
        }
    }

    /// `plugin add-signature`: reads the signature file and sends its text.
    struct AddSignature: RemoteCommand {
        static var configuration: CommandConfiguration { OperationCommand<TrustOperations.AddSignature, NoChangeFlags>.configuration }
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: PluginID
        @Argument(help: "The version.") var version: SemanticVersion
        @Argument(help: "The signature file (plugboard plugin sign).") var signature: String

        func execute(_ output: Output) throws(BoardError) {
            let data = try BoundedInput.read(path: signature, limit: ReleaseSignature.maximumSize, what: "signature")
            guard let text = String(data: data, encoding: .utf8) else {
                throw BoardError(.invalidInput, "the signature file \(signature) is not UTF-8 text")
            }
            output.report(
                try global.perform(TrustOperations.AddSignature(id: id, version: version, signature: text, file: signature)))
        }
    }
}
