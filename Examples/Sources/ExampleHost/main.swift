// example-host: a host app that embeds Plugboard. It loads only the plug-ins the board allows, uses their
// features, and, with --watch, keeps running and reacts to board changes (kill switches, enable, disable).
//
// Usage: example-host --db BOARD [--state FOLDER] [--env NAME] [--host-id ID] [--host-version V] [--watch SECONDS]
//        example-host --server URL --token TOKEN --board-key KEY --cache FOLDER [--env NAME] [--host-id ID] [--watch SECONDS]
//
// With --server the host reads the board served by `plugboard serve`, as a host on another machine would: it uses only
// snapshots signed by the board key KEY (`plugboard board-key show`, or $PLUGBOARD_BOARD_KEY), keeps its last snapshot
// and its anchor in FOLDER and starts from it when the server is unreachable. Secure storage stays on the board's
// machine, so the notes plug-in says it has none. With --state a host of the board file keeps its anchor (the newest
// audit head it accepted) in FOLDER, so that an older copy of the board is refused even after a restart.

import ExampleFeatures
import Foundation
import Logging
import NotesPlugin
import PlugboardFileHost
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardRemoteHost

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func describe(_ entry: some Any) -> String { "\(entry)" }

/// The time of day, for event lines.
func clock() -> String {
    Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true).time(includingFractionalSeconds: true))
}

/// Writes one line straight to stdout (unbuffered), so a script piping it sees each event as it happens.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let boardPath = option("--db") ?? ProcessInfo.processInfo.environment["PLUGBOARD_DB"] ?? "plugboard.sqlite"
let identity = HostIdentity(
    hostID: option("--host-id") ?? "example-host", environment: option("--env") ?? "default",
    hostVersion: option("--host-version") ?? "2.3.0", properties: ["region": "eu-west"])
let watchSeconds = option("--watch").flatMap(Double.init)

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}

let services = ServiceRegistry()
services.register((any GreetingStyle).self, FixedGreetingStyle("Hello"))

let pluginConfiguration: @Sendable (String) -> PluginConfiguration = { id in
    PluginConfiguration(json: Data(id == NotesPlugin.id ? #"{"maxNotes": 50}"#.utf8 : "{}".utf8))
}
let configuration: HostConfiguration
if let server = option("--server") {
    // A host on another machine: the board served by `plugboard serve`, with a cache of its own.
    guard let url = URL(string: server), let token = option("--token") ?? ProcessInfo.processInfo.environment["PLUGBOARD_TOKEN"],
        let cache = option("--cache"), let boardKey = option("--board-key") ?? ProcessInfo.processInfo.environment["PLUGBOARD_BOARD_KEY"]
    else {
        FileHandle.standardError.write(
            Data(
                "example-host: --server needs a URL, --token (or PLUGBOARD_TOKEN), --board-key (or PLUGBOARD_BOARD_KEY) and --cache\n".utf8)
        )
        exit(2)
    }
    do {
        configuration = try HostConfiguration(
            server: url, token: token, cacheFolder: cache, identity: identity, boardKeys: [boardKey], configuration: pluginConfiguration,
            services: services)
    } catch {
        FileHandle.standardError.write(Data("example-host: \(error.message)\n".utf8))
        exit(1)
    }
} else {
    // The board file: one connection for the whole process, shared by the registry, the flags and the secure storage
    // (encrypted under PLUGBOARD_MASTER_KEY, else <board>.key).
    var local: HostConfiguration
    do {
        local = try HostConfiguration(boardAt: boardPath, identity: identity, configuration: pluginConfiguration, services: services)
    } catch {
        FileHandle.standardError.write(Data("example-host: \(error)\n".utf8))
        exit(1)
    }
    local.stateFolder = option("--state")
    configuration = local
}
let host = PluginHost(configuration: configuration)  // its warnings (a cached snapshot, …) go to the log on stderr
host.register(NotesPlugin.id, version: NotesPlugin.version) { NotesPlugin(context: $0) }

say("example-host \(identity.hostID) (host API \(identity.hostVersion), environment \(identity.environment))")
let report = await host.start()
for entry in report {
    let version = entry.version.map { "@\($0)" } ?? ""
    switch entry.state {
    case .loaded:
        let origin =
            host.activePlugins.first { $0.pluginID == entry.pluginID }.map { plugin -> String in
                if case .dynamicLibrary(let sha) = plugin.origin { return "from its library, SHA-256 \(sha.prefix(12))… verified" }
                return "compiled in"
            } ?? ""
        say("  loaded   \(entry.pluginID)\(version)  (\(origin))\(entry.warning.map { " — warning: \($0)" } ?? "")")
    default:
        say(
            "  \(entry.state.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(entry.pluginID)\(version)  — \(entry.reason ?? "")"
        )
    }
}

for notes in host.features((any NoteTaking).self) {
    do {
        try await notes.save(title: "launch", body: "secret launch code 4711")
        say("notes: saved a note through secure storage and read back: \(try await notes.note(titled: "launch") ?? "nothing")")
    } catch {
        say("notes: \(error)")
    }
}
for greeter in host.features((any Greeting).self) {
    do { say("greeter: \(try await greeter.greet("newcomer"))") } catch { say("greeter: \(error)") }
}

if let watchSeconds {
    say("watching the board for \(Int(watchSeconds)) s (\(option("--server") == nil ? "polling every 100 ms" : "changes are pushed"))…")
    let events = host.events()
    let watcher = Task {
        for await event in events {
            switch event {
            case .deactivated(let id, let version, let reason):
                say("  [\(clock())] deactivated \(id)@\(version): \(reason.message); lookups no longer return it")
            case .loaded(let id, let version):
                say("  [\(clock())] loaded \(id)@\(version)")
            case .skipped(let id, _, let reason):
                say("  [\(clock())] skipped \(id): \(reason.message)")
            case .failed(let id, _, let reason):
                say("  [\(clock())] failed \(id): \(reason.message)")
            case .boardChanged, .warning:
                break
            }
        }
    }
    try? await Task.sleep(for: .seconds(watchSeconds))
    watcher.cancel()
    say("active plug-ins now: \(host.activePlugins.map(\.pluginID).joined(separator: ", "))")
}
await host.stop()
