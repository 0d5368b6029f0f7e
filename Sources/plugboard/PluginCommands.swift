import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardVersioning

struct PluginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin", abstract: "Register, enable, kill, yank and pin plug-ins.",
        subcommands: [Register.self, Sign.self, AddSignature.self]
            + commands(
                [PluginOperations.List.self, PluginOperations.Show.self] + PluginOperations.lifecycle + [PluginOperations.Status.self]))

    struct Register: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "register", abstract: "Add a plug-in (if new) and a version from its manifest; several manifests in one change.",
            discussion: """
                Use - to read the manifest from stdin. With --artifact the file is copied into the board's artifact store \
                and its SHA-256 recorded. Each --signature (from plugboard plugin sign) must cover exactly this release; it \
                is stored in the same transaction. Several manifests, or folders of them (every *.json inside, in name \
                order), are registered in one transaction: all of them, or none if any one is refused.
                """
        )
        /// The most manifests one command registers.
        static let manifestCountLimit = 100_000

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The manifest JSON files, or folders of them.") var manifests: [String]
        @Option(name: .long, help: ArgumentHelp("The plug-in's artifact (a shared library) to store with this version.", valueName: "file"))
        var artifact: String?
        @Option(name: .long, help: ArgumentHelp("A signature file of this release (repeatable).", valueName: "sig"))
        var signature: [String] = []

        func validate() throws {
            if manifests.isEmpty { throw ValidationError("give at least one manifest") }
            if (artifact != nil || !signature.isEmpty) && manifests.count > 1 {
                throw ValidationError("--artifact and --signature register one manifest; give one manifest with them")
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            let paths = try Self.expand(manifests)
            let single = paths.count == 1 && manifests.count == 1 && paths[0] == manifests[0]
            if !single, artifact != nil || !signature.isEmpty {
                throw BoardError(.invalidInput, "--artifact and --signature register one manifest, and \(manifests[0]) is a folder")
            }
            let texts = try paths.map { path throws(BoardError) in
                PluginOperations.Register.Manifest(
                    file: path, text: try Self.text(path, limit: BoundedInput.manifestLimit, what: "manifest"))
            }
            let signatures = try signature.map { path throws(BoardError) in
                PluginOperations.Register.Manifest(
                    file: path, text: try Self.text(path, limit: ReleaseSignature.maximumSize, what: "signature"))
            }
            var request = PluginOperations.Register(
                manifests: texts, single: single, artifactSHA256: nil, signatures: signatures, localArtifact: artifact)
            if let artifact, let client = try global.adminClient() {
                // The artifact goes first, streamed; the registration then names it by its digest.
                request.localArtifact = nil
                request.artifactSHA256 = try client.upload(artifact)
            }
            output.report(try global.perform(request))
        }

        /// A file's text, bounded; a file that is not UTF-8 is refused.
        static func text(_ path: String, limit: Int, what: String) throws(BoardError) -> String {
            let data = try BoundedInput.read(path: path, limit: limit, what: what)
            guard let text = String(data: data, encoding: .utf8) else {
                throw BoardError(.invalidInput, "the \(what) \(path) is not UTF-8 text")
            }
            return text
        }

        /// The manifest files named: files as given, folders replaced by their `*.json` files in name order.
        static func expand(_ arguments: [String]) throws(BoardError) -> [String] {
            var paths: [String] = []
            for argument in arguments {
                var isFolder: ObjCBool = false
                if argument != "-", FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder), isFolder.boolValue {
                    guard let names = try? FileManager.default.contentsOfDirectory(atPath: argument) else {
                        throw BoardError(.invalidInput, "the folder \(argument) cannot be read")
                    }
                    let found = names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted()
                    if found.isEmpty {
                        throw BoardError(.invalidInput, "the folder \(argument) holds no *.json manifest; nothing was registered")
                    }
                    paths += found.map { (argument as NSString).appendingPathComponent($0) }
                } else {
                    paths.append(argument)
                }
                if paths.count > manifestCountLimit {
                    throw BoardError(
                        .invalidInput, "more than \(manifestCountLimit) manifests were given; register them in several commands")
                }
            }
            if paths.filter({ $0 == "-" }).count > 1 { throw BoardError(.invalidInput, "stdin (-) can hold one manifest only") }
            return paths
        }
    }
}
