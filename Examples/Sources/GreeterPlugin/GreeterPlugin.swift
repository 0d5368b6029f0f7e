import ExampleFeatures
import Foundation
import Logging
import PlugboardPluginAPI

/// An example dynamic plug-in: greets people in the host's style, counts greetings in its secure storage,
/// and is rolled out to hosts through its gate flag (see its manifest).
final class GreeterPlugin: Plugin, Greeting {
    private let context: PluginContext

    init(context: PluginContext) { self.context = context }

    func activate(context: PluginContext) async throws {
        context.logger.info("greeter activated in host \(context.host.hostID)")
    }

    func deactivate() async {
        context.logger.info("greeter deactivated")
    }

    func greet(_ name: String) async throws -> String {
        let salutation = context.services.service((any GreetingStyle).self)?.salutation ?? "Hello"
        let count = (try await context.secureStorage.value(Int.self, forKey: "greetings") ?? 0) + 1
        try await context.secureStorage.set(count, forKey: "greetings")
        // A secret an operator set with `plugboard secret set --plugin com.example.greeter greeting-suffix …`.
        let suffix = try await context.secureStorage.data(forKey: "greeting-suffix").map { " " + String(decoding: $0, as: UTF8.self) } ?? ""
        return "\(salutation), \(name)!\(suffix) (greeting #\(count) from \(context.pluginID)@\(context.version))"
    }
}

/// The entry symbol the host looks up after checking the library's SHA-256 against the board.
@_cdecl("plugboard_plugin_entry")
public func plugboardPluginEntry() -> UnsafeMutableRawPointer {
    PluginRegistration(pluginID: "com.example.greeter") { context in GreeterPlugin(context: context) }.retainedPointer()
}
