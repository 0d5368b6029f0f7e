import Foundation
package import PlugboardModel
package import PlugboardStore

extension PluginOperations {
    /// `plugin register MANIFEST… [--artifact FILE] [--signature SIG…]`: the manifests' and signatures' text; an
    /// artifact is uploaded first (``AdminUploads``) and named by its SHA-256.
    package struct Register: RoutedRequest {
        /// One manifest file.
        package struct Manifest: Codable, Sendable {
            /// The path the CLI read it from, for sentences.
            package var file: String
            package var text: String
            package init(file: String, text: String) {
                self.file = file
                self.text = text
            }
        }

        package var manifests: [Manifest]
        /// True when the CLI was given one manifest file (not a folder): its problems are told without its name.
        package var single: Bool
        /// The SHA-256 of the artifact uploaded for this release (one manifest only).
        package var artifactSHA256: String?
        /// The signature files' text, with their paths (one manifest only).
        package var signatures: [Manifest]
        /// The artifact on this machine, when the request is performed where the CLI runs; never read from the wire.
        package var localArtifact: String?

        package init(manifests: [Manifest], single: Bool, artifactSHA256: String?, signatures: [Manifest], localArtifact: String?) {
            self.manifests = manifests
            self.single = single
            self.artifactSHA256 = artifactSHA256
            self.signatures = signatures
            self.localArtifact = localArtifact
        }

        enum CodingKeys: String, CodingKey {
            case manifests, single, artifactSHA256, signatures
        }

        package static let route = AdminRoute(
            "plugin.register", .write,
            summary: "Register plug-in versions from their manifests (all or none), one with its uploaded artifact and signatures.",
            parameters: [
                AdminParameter("manifests", .object, required: true, "The manifests: [{file, text}]."),
                AdminParameter("single", .boolean, required: true, "One manifest file was given (not a folder)."),
                AdminParameter("artifact_sha256", .string, "The SHA-256 of the artifact uploaded with PUT /artifacts/{sha256}."),
                AdminParameter("signatures", .object, required: true, "Signature files of this release: [{file, text}]."),
            ], response: "ChangeResult", bodyLimit: 64 << 20)

        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            guard !manifests.isEmpty else { throw BoardError(.invalidInput, "give at least one manifest") }
            if manifests.count > 100_000 {
                throw BoardError(.invalidInput, "more than 100000 manifests were given; register them in several commands")
            }
            var artifact = localArtifact
            if let sha = artifactSHA256 {
                guard localArtifact == nil else { throw BoardError(.invalidInput, "give an uploaded artifact or a local one, not both") }
                artifact = try AdminUploads.path(board: board, sha256: sha)
            }
            if single || artifact != nil || !signatures.isEmpty {
                guard manifests.count == 1 else {
                    throw BoardError(.invalidInput, "--artifact and --signature register one manifest; give one manifest with them")
                }
                let manifest = manifests[0]
                let parsed =
                    single
                    ? try PluginManifest.parse(Data(manifest.text.utf8))
                    : try Self.parse(manifest)
                let parsedSignatures = try signatures.map { file throws(BoardError) in
                    try ReleaseSignature.parse(Data(file.text.utf8), named: file.file)
                }
                defer { if let sha = artifactSHA256 { AdminUploads.discard(board: board, sha256: sha) } }
                return AdminReply(try board.register(parsed, artifactPath: artifact, signatures: parsedSignatures, by: actor))
            }
            var parsed: [PluginManifest] = []
            parsed.reserveCapacity(manifests.count)
            for manifest in manifests { parsed.append(try Self.parse(manifest)) }
            return AdminReply(try board.register(parsed, by: actor))
        }

        static func parse(_ manifest: Manifest) throws(BoardError) -> PluginManifest {
            do { return try PluginManifest.parse(Data(manifest.text.utf8)) } catch {
                throw BoardError(error.code, "\(manifest.file): \(error.message); nothing was registered")
            }
        }
    }
}
