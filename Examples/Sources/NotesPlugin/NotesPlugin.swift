public import ExampleFeatures
import Foundation
import Logging
public import PlugboardPluginAPI

/// An example compiled-in plug-in: keeps notes encrypted through the secure-storage SPI.
public final class NotesPlugin: Plugin, NoteTaking {
    /// The id this plug-in is registered under.
    public static let id = "com.example.notes"
    /// The version compiled into the host.
    public static let version = "1.0.0"

    private let context: PluginContext

    /// Creates the plug-in with the context the host injects.
    public init(context: PluginContext) { self.context = context }

    public func activate(context: PluginContext) async throws {
        // Decoding its own configuration slice: a bad one fails this plug-in only.
        struct Settings: Decodable { var maxNotes: Int? }
        let settings = try context.configuration.decode(Settings.self)
        context.logger.info("notes activated (max \(settings.maxNotes ?? 100) notes)")
    }

    public func deactivate() async {}

    public func save(title: String, body: String) async throws {
        try await context.secureStorage.set(Data(body.utf8), forKey: "note:" + title)
    }

    public func note(titled title: String) async throws -> String? {
        try await context.secureStorage.data(forKey: "note:" + title).map { String(decoding: $0, as: UTF8.self) }
    }
}
