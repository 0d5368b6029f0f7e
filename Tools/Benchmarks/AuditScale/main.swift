// Makes a board for the CLI at scale: N registered plug-ins, 12 of them enabled, and an audit log
// of M rows in the mix a busy board gathers. Used by Tools/Benchmarks/audit-scale/run.py.
//
//     audit-scale-board PATH [--plugins 10000] [--rows 1000000]
//
// The plug-ins are registered with one change, as `plugboard plugin register FOLDER` does. The other rows are
// appended in changes of 1,000 rows by one principal each (the package's `Board.appendAuditEntries`, which records
// them as any change does: hash-chained, each carrying the state root), so that a million rows take a minute rather
// than the hours of a million separate commits. What they say, per 100 changes:
// - 60 changes by 20 host accounts (`svc-host-01` …): `secret.write` of the 12 enabled plug-ins;
// - 20 by 5 admins (the OS user who ran this, `alice` …): `plugin.enable` / `plugin.disable` of any plug-in, in production or staging;
// - 10 by the same admins: `flag.update` of 500 flags;
// - 5 by `deploy` on behalf of `ci-pipeline` (`--as`): `version.register` of `ID@1.0.N`;
// - 5 by 200 other users: refused attempts (`plugin.kill`, "not allowed").
import BenchmarkContexts
import Foundation
import PlugboardBoardSecureStorage
import PlugboardModel
import PlugboardSecureStorage
import PlugboardStore

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("audit-scale-board: \(message)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name) else { return value }
    guard index + 1 < arguments.count, let number = Int(arguments[index + 1]), number >= 0 else { fail("\(name) needs a number") }
    arguments.removeSubrange(index...index + 1)
    return number
}
let pluginCount = max(12, option("--plugins", default: 10_000))
let rowCount = option("--rows", default: 1_000_000)
guard arguments.count == 1 else { fail("usage: audit-scale-board PATH [--plugins N] [--rows M]") }
let path = arguments[0]
guard !FileManager.default.fileExists(atPath: path) else { fail("\(path) exists") }

// Seeded, so that two boards of the same size say the same things.
extension SplitMix64 {
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

do {
    // As `plugboard init` makes it: the OS user is its admin, and its secure storage has a master key in a key file
    // beside it, so that the CLI's changes and a host run on it as on any board.
    let admin = try Principal.current()
    let board = try Board.create(at: path, by: admin) { board throws(BoardError) in
        _ = try BoardSecureStorage.initialize(board: board, by: admin)
    }
    let ids = (0..<pluginCount).map { String(format: "com.scale.p%06d", $0) }
    let manifests = try ids.map { id in
        try PluginManifest.parse(Data("{\"id\":\"\(id)\",\"name\":\"\(id)\",\"version\":\"1.0.0\",\"host\":\">=1.0.0\"}".utf8))
    }
    _ = try board.register(manifests, by: admin)
    let enabled = stride(from: 0, to: pluginCount, by: pluginCount / 12).prefix(12).map { ids[$0] }
    // In the environment `plugboard plugin enable` and hosts use when none is named.
    for id in enabled { _ = try board.setEnabled(id, true, environment: "default", by: admin) }

    var random = SplitMix64(seed: 11)
    let admins = [admin.osUser, "alice", "bob", "carol", "dave"]
    let deploy = try Principal(osUser: "deploy", onBehalfOf: "ci-pipeline")
    var written = try board.verifyAudit().rowsChecked
    var change = 0
    while written < rowCount {
        let count = min(1_000, rowCount - written)
        let kind = change % 100
        change += 1
        let actor: Principal
        var entries: [AuditEntry] = []
        entries.reserveCapacity(count)
        switch kind {
        case 0..<60:
            actor = try Principal(osUser: String(format: "svc-host-%02d", random.below(20) + 1))
            for _ in 0..<count {
                let key = "key-\(random.below(8))"
                entries.append(
                    AuditEntry(
                        action: .secretWrite, targetType: "plugin", targetID: enabled[random.below(enabled.count)],
                        after: .object(["keys": .array([.string(key)]), "data_key_versions": .array([.int(1)])])))
            }
        case 60..<90:
            actor = try Principal(osUser: admins[random.below(admins.count)])
            for _ in 0..<count {
                if kind < 80 {
                    let on = random.below(2) == 0
                    entries.append(
                        AuditEntry(
                            action: on ? .pluginEnable : .pluginDisable, targetType: "plugin", targetID: ids[random.below(ids.count)],
                            environment: random.below(2) == 0 ? "production" : "staging",
                            before: .object(["enabled": .bool(!on), "pinned": .null]),
                            after: .object(["enabled": .bool(on), "pinned": .null])))
                } else {
                    let on = random.below(2) == 0
                    entries.append(
                        AuditEntry(
                            action: on ? .flagEnable : .flagDisable, targetType: "flag", targetID: "flag-\(random.below(500))",
                            environment: "production",
                            before: .object(["enabled": .bool(!on)]), after: .object(["enabled": .bool(on)])))
                }
            }
        case 90..<95:
            actor = deploy
            for _ in 0..<count {
                let id = ids[random.below(ids.count)]
                entries.append(
                    AuditEntry(
                        action: .pluginRegister, targetType: "plugin_version", targetID: "\(id)@1.0.\(random.below(1000) + 1)",
                        after: .object(["state": .string("active")])))
            }
        default:
            actor = try Principal(osUser: "user-\(random.below(200))")
            for _ in 0..<count {
                entries.append(
                    AuditEntry(
                        action: .pluginKill, outcome: .refused, targetType: "plugin", targetID: ids[random.below(ids.count)],
                        reason: "not allowed: only an admin or an owner of the plug-in may do this"))
            }
        }
        try board.appendAuditEntries(entries, by: actor)
        written += count
    }
    print("audit-scale-board: \(path): \(pluginCount) plug-ins, \(written) audit rows")
} catch {
    fail("\(error)")
}
