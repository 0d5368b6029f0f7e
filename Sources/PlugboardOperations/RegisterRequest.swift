import Foundation
public import PlugboardModel
package import PlugboardStore

extension PluginOperations {
    /// `plugin register MANIFEST… [--artifact FILE] [--signature SIG…]`: the manifests' and signatures' text; an
    /// artifact is uploaded first (`ArtifactUploads`) and named by its SHA-256.
    public struct Register: RoutedRequest {
        /// One manifest file.
        public struct Manifest: Codable, Sendable {
            /// The path it was read from, for sentences.
            public var file: String
            /// Its JSON text.
            public var text: String
            /// A manifest's or a signature's text, and the path it was read from.
            public init(file: String, text: String) {
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

        /// One release: its manifest, the artifact on this machine (nil for a compiled-in plug-in) and its signature
        /// files.
        public init(manifest: Manifest, artifact: String? = nil, signatures: [Manifest] = []) {
            self.init(manifests: [manifest], single: true, artifactSHA256: nil, signatures: signatures, localArtifact: artifact)
        }

        /// Several releases without artifacts, registered all or none (the CLI's folder of manifests).
        public init(manifests: [Manifest]) {
            self.init(manifests: manifests, single: false, artifactSHA256: nil, signatures: [], localArtifact: nil)
        }

        enum CodingKeys: String, CodingKey {
            case manifests, single, artifactSHA256, signatures
        }

        public static let declaration = OperationDeclaration(
            .pluginRegister, .write,
            abstract: "Register plug-in versions from their manifests (all or none), one with its uploaded artifact and signatures.",
            bodyLimit: 64 << 20)

        package static let fields = [
            OperationParameter("manifests", .object, required: true, "The manifests: [{file, text}]."),
            OperationParameter("single", .boolean, required: true, "One manifest file was given (not a folder)."),
            OperationParameter("artifact_sha256", .string, "The SHA-256 of the artifact uploaded with PUT /artifacts/{sha256}."),
            OperationParameter("signatures", .object, required: true, "Signature files of this release: [{file, text}]."),
        ]

        /// What it answers.
        public typealias Response = ChangeResult
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            guard !manifests.isEmpty else { throw BoardError(.invalidInput, "give at least one manifest") }
            if manifests.count > 100_000 {
                throw BoardError(.invalidInput, "more than 100000 manifests were given; register them in several commands")
            }
            var artifact = localArtifact
            if let sha = artifactSHA256 {
                guard localArtifact == nil else { throw BoardError(.invalidInput, "give an uploaded artifact or a local one, not both") }
                artifact = try ArtifactUploads.path(board: board, sha256: sha)
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
                defer { if let sha = artifactSHA256 { ArtifactUploads.discard(board: board, sha256: sha) } }
                return OperationReply(try board.register(parsed, artifactPath: artifact, signatures: parsedSignatures, by: actor))
            }
            var parsed: [PluginManifest] = []
            parsed.reserveCapacity(manifests.count)
            for manifest in manifests { parsed.append(try Self.parse(manifest)) }
            return OperationReply(try board.register(parsed, by: actor))
        }

        static func parse(_ manifest: Manifest) throws(BoardError) -> PluginManifest {
            do { return try PluginManifest.parse(Data(manifest.text.utf8)) } catch {
                throw BoardError(error.code, "\(manifest.file): \(error.message); nothing was registered")
            }
        }
    }
}
