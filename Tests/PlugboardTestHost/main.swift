// plugboard-test-host: a host process for the tests that cross processes. It embeds the registry, board-backed
// flags and secure storage, runs compiled-in plug-ins, and prints what happens as JSON lines on stdout. It runs
// until its standard input closes (or, with --until-signal, until SIGINT or SIGTERM), then stops its plug-ins,
// prints {"event":"stopped"} and exits 0. See `usage` below (`--help` prints it).
//
// With --server the host reads the board served by `plugboard serve` (no secure storage then), keeping its cache and
// its anchor in FOLDER, and uses only snapshots signed by the board key KEY (`plugboard board-key show`; the option
// may be repeated). With --state a host of the board file keeps its anchor (the newest audit head it accepted) in
// FOLDER; --anchor gives the one to start from.
//
// Every plug-in of --plugins is compiled in at each version of --versions (1.0.0 unless given), so that the host switches
// between them in-process as the board's selection moves. The plug-ins named by --counting count their activations in
// their secure storage (key `activations`); the one named by --crash-on-activate (ID: every version of it; ID@VERSION:
// that release only) crashes the process (a fatal error) in its activation. With --state the host notes there
// which plug-in code it enters, so that its next start reports such a crash; --safe-mode loads no plug-in.
//
// With --board-per-service the registry, the flags and the secure storage each open the board themselves (three
// connections in one process, as hosts did before they shared one Board): opening must never cost another
// connection its locks.
//
// --approver-key KEY (repeatable) pins the approver keys the host trusts, and --approvals N how many of their
// signatures a plug-in's enablement needs (every key given, unless N is).

import Foundation
import PlugboardBoardSecureStorage
import PlugboardFileHost
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardRemoteHost
import PlugboardSecureStorage
import PlugboardStore

func option(_ name: String) -> String? {
    options(name).first
}

/// Every value of an option that may be repeated.
func options(_ name: String) -> [String] {
    let arguments = CommandLine.arguments
    return arguments.indices.filter { arguments[$0] == name && $0 + 1 < arguments.count }.map { arguments[$0 + 1] }
}

/// One JSON object a line, written at once (stdout is a pipe). Built by hand: a fleet of these hosts prints an event
/// each per change, and Foundation's JSONSerialization would be most of a host's work for it.
func emit(_ fields: [String: String]) {
    func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
    let line = "{" + fields.sorted { $0.key < $1.key }.map { quoted($0.key) + ":" + quoted($0.value) }.joined(separator: ",") + "}\n"
    FileHandle.standardOutput.write(Data(line.utf8))
}

/// A feature the test host defines and calls through `PluginHost.forEach(_:_:)` (with --call-features).
protocol Probing {
    func probe() -> String
}

/// A compiled-in plug-in that uses its host services on every activation: it evaluates a flag and, when
/// `counting`, counts its activations in its secure storage, so that plug-in writes go through the shared board too.
final class ProbePlugin: Plugin, Probing {
    let counting: Bool
    let crashing: Bool
    let crashingInCall: Bool
    init(counting: Bool, crashing: Bool, crashingInCall: Bool = false) {
        self.counting = counting
        self.crashing = crashing
        self.crashingInCall = crashingInCall
    }

    func probe() -> String {
        if crashingInCall { fatalError("a plug-in crashes in a call of its feature (--crash-in-call)") }
        return "ok"
    }

    func activate(context: PluginContext) async throws {
        if crashing { fatalError("\(context.pluginID) crashes in its activation (--crash-on-activate)") }
        _ = context.flags.bool("probe.flag", default: false, context: [:])
        guard counting else { return }
        let stored: Data? = try await context.secureStorage.data(forKey: "activations")
        let count = stored.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
        try await context.secureStorage.set(Data(String(count + 1).utf8), forKey: "activations")
    }

    func deactivate() async {}
}

let usage = """
    usage: plugboard-test-host --db BOARD --plugins ID[,ID…] [--versions V[,V…]] [--counting ID[,ID…]] [--host-id ID]
                               [--env NAME] [--poll-ms N] [--board-per-service] [--state FOLDER]
                               [--anchor SEQ:HASH:ROOT] [--crash-on-activate ID[@VERSION]] [--safe-mode]
                               [--call-features] [--crash-in-call ID[@VERSION]] [--until-signal]
                               [--approver-key KEY… [--approvals N]]
           plugboard-test-host --server URL --token TOKEN --cache FOLDER (--board-key KEY… | --trust-on-first-use)
                               --plugins ID[,ID…] [--versions V[,V…]] [--host-id ID] [--env NAME]
                               [--fail-closed-after SECONDS] [--accept-stale-first-snapshot] [--min-seq N]
                               [--relay-stream URL] [--crash-on-activate ID[@VERSION]] [--safe-mode] [--until-signal]

    Runs a plug-in host and prints what it does as JSON lines. It runs while its standard input is open: when stdin
    closes (end of file, or `< /dev/null`) it stops its plug-ins, prints {"event":"stopped"} and exits 0. Give it a
    terminal or a pipe to keep it running, or --until-signal to run until SIGINT or SIGTERM whatever stdin is.

    With --server it reads the board served by `plugboard serve`, keeping its cache and its anchor in FOLDER, and
    uses only snapshots signed by the board key KEY (`plugboard board-key show`; repeatable). Without an anchor in
    FOLDER, it takes as its first state only a snapshot the server proved fresh for its request;
    --accept-stale-first-snapshot takes one without that proof, and --min-seq N refuses every snapshot of an audit row
    below N (and takes a first one at or above N without the proof). With --state a host of the board file keeps its
    anchor (the newest audit head it accepted) in FOLDER; --anchor gives the one to start from. --relay-stream URL
    reads the event stream through a relay (nginx with Nchan) and snapshots from the server.

    The host's state folder (FOLDER of --state or --cache) also notes which plug-in code it enters: a process that
    dies there reports the crash on its next start, and a release that crashed it 3 times within 10 minutes is
    quarantined (skipped as `quarantined`). --crash-on-activate ID makes that compiled-in plug-in crash the process in
    its activation (ID@VERSION: only that release of it); --safe-mode loads no plug-in at all. --call-features calls
    a feature of every active plug-in once the host started (through the host, under its crash marker) and prints
    {"event":"called","plugins":"N"}; --crash-in-call ID[@VERSION] makes that plug-in crash the process in the call.

    Every plug-in of --plugins is compiled in at each version of --versions (default 1.0.0): the host loads the one the
    board selects, and switches to another in-process when the selection moves.

    --approver-key KEY (base64 Ed25519 public key; repeatable, with --db or --server) pins the approver keys the host
    trusts: it loads a plug-in only when its enablement carries --approvals N valid signatures by them (default: as
    many as keys given), whatever the board's approvers and policy say.

    """
if CommandLine.arguments.contains("--help") || CommandLine.arguments.contains("-h") {
    FileHandle.standardOutput.write(Data(usage.utf8))
    exit(0)
}
guard let pluginList = option("--plugins"), option("--db") != nil || option("--server") != nil else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
let identity = HostIdentity(hostID: option("--host-id") ?? "test-host", environment: option("--env") ?? "default", hostVersion: "2.0.0")
let boardPerService = CommandLine.arguments.contains("--board-per-service")

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("plugboard-test-host: \(message)\n".utf8))
    exit(1)
}

func openBoard(_ path: String) -> Board {
    do { return try Board.open(at: path) } catch { fail(error.message) }
}

var configuration: HostConfiguration
if let server = option("--server") {
    guard let url = URL(string: server), let token = option("--token"), let cache = option("--cache") else {
        fail("--server needs a URL, --token and --cache")
    }
    do {
        var served = try HostConfiguration(
            server: url, token: token, cacheFolder: cache, identity: identity, boardKeys: options("--board-key"),
            trustOnFirstUse: CommandLine.arguments.contains("--trust-on-first-use"),
            acceptStaleFirstSnapshot: CommandLine.arguments.contains("--accept-stale-first-snapshot"),
            minimumSequence: option("--min-seq").flatMap { Int64($0) }, relayStream: option("--relay-stream").flatMap { URL(string: $0) })
        served.failClosedAfter = option("--fail-closed-after").flatMap(Double.init).map { .milliseconds(Int($0 * 1000)) }
        configuration = served
    } catch {
        fail(error.message)
    }
} else {
    let boardPath = option("--db")!
    let board = openBoard(boardPath)
    let secrets: BoardSecureStorage
    do { secrets = try BoardSecureStorage.open(board: boardPerService ? openBoard(boardPath) : board) } catch { fail(error.message) }
    let flags = BoardFlagProvider(board: boardPerService ? openBoard(boardPath) : board, environment: identity.environment)
    var local = HostConfiguration(
        board: board, identity: identity, pollInterval: .milliseconds(Int(option("--poll-ms") ?? "") ?? 100),
        secureStorage: { id in try secrets.storage(forPlugin: id) }, flags: flags)
    local.stateFolder = option("--state")
    do { local.anchor = try option("--anchor").map { text throws(BoardError) in try AuditCheckpoint(parsing: text) } } catch {
        fail(error.message)
    }
    configuration = local
}
configuration.safeMode = CommandLine.arguments.contains("--safe-mode")
if !options("--approver-key").isEmpty {
    do {
        configuration.approvals = try ApprovalAnchor(
            publicKeys: options("--approver-key"), required: option("--approvals").flatMap { Int($0) } ?? options("--approver-key").count)
    } catch {
        fail(error.message)
    }
}
let host = PluginHost(configuration: configuration)
let counting = Set((option("--counting") ?? "").split(separator: ",").map(String.init))
let crashing = option("--crash-on-activate")
let crashingInCall = option("--crash-in-call")
let versions = (option("--versions") ?? "1.0.0").split(separator: ",").map(String.init)
for id in pluginList.split(separator: ",").map(String.init) {
    for version in versions {
        let crashes = crashing == id || crashing == "\(id)@\(version)"
        let crashesInCall = crashingInCall == id || crashingInCall == "\(id)@\(version)"
        host.register(id, version: version) { _ in
            ProbePlugin(counting: counting.contains(id), crashing: crashes, crashingInCall: crashesInCall)
        }
    }
}

let events = host.events()
let printer = Task {
    for await event in events {
        switch event {
        case .loaded(let id, let version): emit(["event": "loaded", "plugin": id, "version": version])
        case .deactivated(let id, let version, let reason):
            emit(["event": "deactivated", "plugin": id, "version": version, "reason": reason.code.rawValue, "message": reason.message])
        case .skipped(let id, _, let reason):
            emit(["event": "skipped", "plugin": id, "reason": reason.code.rawValue, "message": reason.message])
        case .failed(let id, _, let reason): emit(["event": "failed", "plugin": id, "reason": reason.message])
        case .boardChanged(let version): emit(["event": "changed", "data_version": String(version)])
        case .warning(let message): emit(["event": "warning", "message": message])
        }
    }
}
await host.start()
emit(["event": "started", "pid": String(getpid())])
if CommandLine.arguments.contains("--call-features") {
    // Each active plug-in's feature, called under the host's crash marker.
    var called = 0
    host.forEach((any Probing).self) { probe in
        _ = probe.probe()
        called += 1
    }
    emit(["event": "called", "plugins": String(called)])
}

if CommandLine.arguments.contains("--until-signal") {
    // Run until SIGINT or SIGTERM (handled here, so that the host stops its plug-ins before exiting).
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let (signals, received) = AsyncStream<Void>.makeStream()
    let sources = [SIGINT, SIGTERM].map { number in
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { received.yield() }
        source.resume()
        return source
    }
    for await _ in signals { break }
    withExtendedLifetime(sources) {}
} else {
    // Run until stdin closes.
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
            _ = FileHandle.standardInput.readDataToEndOfFile()
            done.resume()
        }
    }
}
await host.stop()
await printer.value  // stop() finishes the event stream: every event is printed before "stopped"
emit(["event": "stopped"])
exit(0)
