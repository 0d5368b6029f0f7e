import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// `plugboard advisory …`: advisories in OSV's format, and what hosts do about the versions they affect.
struct AdvisoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "advisory", abstract: "Import, list, show and withdraw advisories; choose what hosts do about them.",
        subcommands: [Import.self] + commands(AdvisoryOperations.commands) + [AdvisoryFeedCommand.self])

    /// `advisory import FILE|FOLDER`: the operation, with the documents read here.
    struct Import: RemoteCommand {
        static let configuration = declared(AdvisoryOperations.Import.self)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "An OSV JSON file, or a folder of them (every *.json inside, in name order).") var path: String
        @OptionGroup var change: WideningFlags

        func execute(_ output: Output) throws(BoardError) {
            var documents: [(text: String, file: String)] = []
            for file in try Self.files(path) {
                let data = try BoundedInput.read(path: file, limit: OSVDocument.maximumSize, what: "advisory")
                guard let text = String(data: data, encoding: .utf8) else {
                    throw BoardError(.invalidInput, "the advisory \(file) is not UTF-8 text; nothing was imported")
                }
                documents.append((text, file))
            }
            if let result = try global.performOrRequest(AdvisoryOperations.Import(documents: documents), change: change, output) {
                output.report(result)
            }
        }

        /// The file given, or the `*.json` files of the folder given, in name order; at most the import's limit.
        static func files(_ path: String) throws(BoardError) -> [String] {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return [path] }
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
                throw BoardError(.invalidInput, "the folder \(path) cannot be read")
            }
            let found = names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted()
            if found.isEmpty { throw BoardError(.invalidInput, "the folder \(path) holds no *.json advisory; nothing was imported") }
            if found.count > Board.advisoryImportLimit {
                throw BoardError(
                    .invalidInput,
                    "the folder \(path) holds \(found.count) advisories, more than the \(Board.advisoryImportLimit) one import takes; import it in parts"
                )
            }
            return found.map { (path as NSString).appendingPathComponent($0) }
        }
    }
}
