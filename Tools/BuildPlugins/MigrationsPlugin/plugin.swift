import Foundation
import PackagePlugin

/// Compiles the target's `*.sql` files into `EmbeddedMigrations.swift` with `MigrationsCodegen`.
@main
struct MigrationsPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        guard let target = target as? any SourceModuleTarget else { return [] }
        let sqlFiles = target.sourceFiles
            .map(\.url)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(sqlFiles.count) migrations",
                executable: try context.tool(named: "MigrationsCodegen").url,
                arguments: [output.path] + sqlFiles.map(\.path),
                inputFiles: sqlFiles,
                outputFiles: [output]
            )
        ]
    }
}
