import Foundation
import PackagePlugin

/// Compiles a target's text files into Swift with `EmbedCodegen`, so that no resource folder travels beside a binary:
/// `*.sql` into `EmbeddedMigrations.swift` (the migrations), `*.mustache` into `EmbeddedTemplates.swift` (the
/// console's templates).
@main
struct EmbedPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        guard let target = target as? any SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "EmbedCodegen").url
        let kinds = [("sql", "migrations", "EmbeddedMigrations.swift"), ("mustache", "templates", "EmbeddedTemplates.swift")]
        return kinds.compactMap { (ext, kind, name) -> Command? in
            let files = target.sourceFiles.map(\.url).filter { $0.pathExtension == ext }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
            guard !files.isEmpty else { return nil }
            let output = context.pluginWorkDirectoryURL.appending(path: name)
            return .buildCommand(
                displayName: "Embedding \(files.count) \(kind)",
                executable: tool,
                arguments: [kind, output.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output]
            )
        }
    }
}
