import Foundation
import PlugboardTestSupport
import Testing

/// Each advisory action with real hosts, as an operator drives it with the CLI: a host that reads the board file and a
/// host that follows `plugboard serve` (signed snapshots). `warn` loads and reports, `refuse-new` keeps what runs and
/// refuses a new load for the highest release the advisory leaves, `stop` stops the running release as a kill switch
/// of the version does, with the advisory as the reason; `policy set --advisories stop` raises an action.
@Suite("advisory actions with real hosts (processes)", .timeLimit(.hangGuard))
struct AdvisoryActionProcessTests {
    static let hostBinary = Sandbox.builtExecutable("plugboard-test-host")
    static let alpha = "com.example.alpha"
    static let summary = "alpha sends its session token to a third party"
    static let versions = ["1.0.0", "1.1.0", "1.2.0"]

    /// How a host reads the board.
    enum Kind: String, CaseIterable, Sendable {
        case file, served
    }

    /// OSV documents written by hand in the specification's shape. Only PBSA-2026-0301 affects a registered release
    /// (1.1.0 and 1.2.0); 0302 lists 1.0.0 but its publisher withdrew it; 0303 is fixed in 1.0.0.
    static let documents = [
        "PBSA-2026-0301.json": """
        {"schema_version": "1.7.0", "id": "PBSA-2026-0301", "modified": "2026-11-24T10:00:00Z",
         "published": "2026-11-24T09:00:00Z", "aliases": ["CVE-2026-30301", "GHSA-3c4v-5b6n-7m8p"],
         "summary": "\(summary)", "details": "From 1.1.0 through 1.2.0 the token goes out with every crash report.",
         "affected": [{"package": {"ecosystem": "Plugboard", "name": "\(alpha)"},
                       "ranges": [{"type": "SEMVER", "events": [{"introduced": "1.1.0"}, {"last_affected": "1.2.0"}]}]}],
         "database_specific": {"severity": "LOW"}}
        """,
        "PBSA-2026-0302.json": """
        {"schema_version": "1.7.0", "id": "PBSA-2026-0302", "modified": "2026-11-23T10:00:00Z",
         "withdrawn": "2026-11-23T10:00:00Z", "aliases": ["CVE-2026-30302"], "summary": "Filed against alpha by mistake",
         "affected": [{"package": {"ecosystem": "Plugboard", "name": "\(alpha)"}, "versions": ["1.0.0"]}],
         "database_specific": {"severity": "CRITICAL"}}
        """,
        "PBSA-2026-0303.json": """
        {"schema_version": "1.7.0", "id": "PBSA-2026-0303", "modified": "2026-11-22T10:00:00Z", "aliases": [],
         "summary": "alpha before 1.0.0 accepts unsigned settings",
         "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:L/A:N"}],
         "affected": [{"package": {"ecosystem": "Plugboard", "name": "\(alpha)"},
                       "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "1.0.0"}]}]}]}
        """,
    ]

    /// A board with alpha's three releases enabled in `environment`, and for `.served` the server, a hosts token of the
    /// environment and the board key its hosts pin.
    struct Drill {
        let kind: Kind
        let environment: String
        let sandbox: Sandbox
        let served: (server: ChildProcess, url: String, token: String, key: String)?

        init(_ kind: Kind, environment: String) async throws {
            self.kind = kind
            self.environment = environment
            sandbox = try await Sandbox.withBoard(AdvisoryActionProcessTests.versions.map { manifest(alpha, $0) })
            try await sandbox.ok("plugin", "enable", alpha, "--env", environment)
            guard kind == .served else {
                served = nil
                return
            }
            let created =
                try await sandbox.ok(
                    "token", "create", "--name", "hosts", "--for", "hosts", "--env", environment, "--json"
                ).json() as? [String: Any]
            let token = try #require(created?["token"] as? String)
            let key = try await sandbox.boardKey()
            let server = try ChildProcess(
                Sandbox.binary, ["serve", "--db", sandbox.board, "--listen", "127.0.0.1:0", "--log-level", "warning"])
            let port = try await server.servedPort()
            served = (server, "http://127.0.0.1:\(port)", token, key)
        }

        /// A host of the environment with alpha's three releases compiled in, started and running the highest.
        func host(_ id: String, loading version: String = "1.2.0") async throws -> ChildProcess {
            let reads =
                served.map {
                    ["--server", $0.url, "--token", $0.token, "--board-key", $0.key, "--cache", sandbox.root.path + "/cache-\(id)"]
                }
                ?? ["--db", sandbox.board, "--poll-ms", "50"]
            let host = try ChildProcess(
                AdvisoryActionProcessTests.hostBinary,
                reads + ["--plugins", alpha, "--versions", versions.joined(separator: ","), "--host-id", id, "--env", environment])
            let loaded = await host.waitForLine { AdvisoryActionProcessTests.loaded($0, version) }
            #expect(loaded != nil, "\(id) did not load alpha \(version): \(host.output) \(host.errorOutput)")
            return host
        }

        /// Imports the folder of documents, as an operator would.
        func importAdvisories() async throws {
            let folder = sandbox.root.appendingPathComponent("advisories")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, text) in AdvisoryActionProcessTests.documents {
                try Data(text.utf8).write(to: folder.appendingPathComponent(name))
            }
            let imported = try await sandbox.run(["advisory", "import", folder.path])
            #expect(imported.status == 0 && imported.stderr.isEmpty, "\(imported)")
            #expect(imported.stdout.contains("Imported 3 advisories: PBSA-2026-0301, PBSA-2026-0302, PBSA-2026-0303."), "\(imported)")
            // Only 0301 stands and affects a registered release, and only 1.1.0 and 1.2.0.
            let affecting = try #require(try await sandbox.ok("advisory", "list", "--affecting", "--json").json() as? [[String: Any]])
            #expect(affecting.compactMap { $0["id"] as? String } == ["PBSA-2026-0301"], "\(affecting)")
            let hits = (affecting.first?["affecting"] as? [String] ?? []).sorted()
            #expect(hits == ["\(alpha)@1.1.0", "\(alpha)@1.2.0"], "\(affecting)")
        }

        /// The host's row for alpha in `plugboard plugin status --json`, once `match` accepts it.
        func report(_ host: String, _ match: @escaping ([String: Any]) -> Bool) async throws -> [String: Any] {
            try await eventually("\(host)'s report of alpha", poll: .milliseconds(50)) {
                let rows = try await sandbox.ok("plugin", "status", alpha, "--json").json() as? [[String: Any]] ?? []
                return rows.first { $0["host_id"] as? String == host && match($0) }
            }
        }

        /// Stops the hosts and the server; the audit log still verifies.
        func finish(_ hosts: [ChildProcess]) async throws {
            for host in hosts { #expect(await host.closeInput() == 0, "\(host.errorOutput)") }
            if let served { #expect(await served.server.stop() == 0, "\(served.server.errorOutput)") }
            try await sandbox.ok("audit", "verify")
        }
    }

    static func loaded(_ line: String, _ version: String) -> Bool {
        line.contains(#""event":"loaded""#) && line.contains(#""plugin":"\#(alpha)""#) && line.contains(#""version":"\#(version)""#)
    }

    static func deactivated(_ line: String) -> Bool {
        line.contains(#""event":"deactivated""#) && line.contains(#""plugin":"\#(alpha)""#)
    }

    /// The fields of one line a test host printed.
    static func fields(_ line: String) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: String] ?? [:]
    }

    @Test(arguments: Kind.allCases) func warnLoadsTheReleaseAndReportsTheAdvisory(kind: Kind) async throws {
        let drill = try await Drill(kind, environment: "dev")
        let running = try await drill.host("dev-running")
        try await drill.importAdvisories()
        // Severity low: warn, as `advisory show` says.
        let shown = try await drill.sandbox.run(["advisory", "show", "PBSA-2026-0301"])
        #expect(shown.status == 0 && shown.stderr.isEmpty && shown.stdout.contains("CVE-2026-30301"), "\(shown)")
        let actions = try await drill.sandbox.ok("advisory", "show", "PBSA-2026-0301", "--json").json() as? [String: Any]
        let dev = (actions?["actions"] as? [[String: Any]] ?? []).first { $0["environment"] as? String == "dev" }
        #expect(dev?["action"] as? String == "warn", "\(String(describing: actions))")

        let warning = "advisory PBSA-2026-0301 (\(Self.summary)) affects \(Self.alpha)@1.2.0 (warn in dev)"
        let row = try await drill.report("dev-running") { ($0["warning"] as? String)?.contains("PBSA-2026-0301") == true }
        #expect(row["state"] as? String == "loaded" && row["version"] as? String == "1.2.0", "\(row)")
        #expect((row["warning"] as? String)?.contains(warning) == true, "\(row)")
        // A host that starts now loads the release too, and reports the same warning.
        let fresh = try await drill.host("dev-fresh")
        let freshRow = try await drill.report("dev-fresh") { ($0["warning"] as? String)?.contains(warning) == true }
        #expect(freshRow["state"] as? String == "loaded" && freshRow["version"] as? String == "1.2.0", "\(freshRow)")
        // The table an operator reads names it as well.
        let table = try await drill.sandbox.run(["plugin", "status", Self.alpha])
        #expect(table.status == 0 && table.stderr.isEmpty && table.stdout.contains("PBSA-2026-0301"), "\(table)")
        #expect(!running.output.contains(where: Self.deactivated), "a warning stopped the release: \(running.output)")
        try await drill.finish([running, fresh])
    }

    @Test(arguments: Kind.allCases) func refuseNewKeepsARunningReleaseAndANewHostTakesTheHighestItLeaves(kind: Kind) async throws {
        let drill = try await Drill(kind, environment: "staging")
        let running = try await drill.host("staging-running")
        try await drill.importAdvisories()
        let set = try await drill.sandbox.run(["advisory", "set-action", "PBSA-2026-0301", "--env", "staging", "--action", "refuse-new"])
        #expect(set.status == 0 && set.stderr.isEmpty, "\(set)")
        #expect(set.stdout.contains("Set the action of PBSA-2026-0301 in staging to refuse-new."), "\(set)")

        // The running host keeps 1.2.0 and reports the advisory.
        let row = try await drill.report("staging-running") { ($0["warning"] as? String)?.contains("refuse-new in staging") == true }
        #expect(row["state"] as? String == "loaded" && row["version"] as? String == "1.2.0", "\(row)")
        // A host that has not loaded it refuses 1.2.0 and 1.1.0 and takes 1.0.0: the withdrawn advisory and the one fixed
        // in 1.0.0 leave it alone.
        let fresh = try await drill.host("staging-fresh", loading: "1.0.0")
        let freshRow = try await drill.report("staging-fresh") { $0["state"] as? String == "loaded" }
        #expect(freshRow["version"] as? String == "1.0.0" && freshRow["warning"] == nil, "\(freshRow)")
        #expect(!fresh.output.contains { Self.loaded($0, "1.2.0") || Self.loaded($0, "1.1.0") }, "\(fresh.output)")
        #expect(!running.output.contains(where: Self.deactivated), "refuse-new stopped a running release: \(running.output)")
        try await drill.finish([running, fresh])
    }

    @Test(arguments: Kind.allCases) func stopStopsTheRunningReleaseWithTheAdvisoryAsReason(kind: Kind) async throws {
        let drill = try await Drill(kind, environment: "production")
        let running = try await drill.host("production-running")
        try await drill.importAdvisories()
        let seen = running.output.count
        let set = try await drill.sandbox.run(["advisory", "set-action", "PBSA-2026-0301", "--env", "production", "--action", "stop"])
        #expect(set.status == 0 && set.stderr.isEmpty, "\(set)")
        #expect(set.stdout.contains("Set the action of PBSA-2026-0301 in production to stop."), "\(set)")
        try await Self.expectStopped(running, after: seen, environment: "production")
        let row = try await drill.report("production-running") { $0["state"] as? String == "loaded" && $0["version"] as? String == "1.0.0" }
        #expect(row["warning"] == nil, "\(row)")
        try await drill.finish([running])
    }

    @Test(arguments: Kind.allCases) func policySetRaisesRefuseNewToStopOnARunningHost(kind: Kind) async throws {
        let drill = try await Drill(kind, environment: "qa")
        let running = try await drill.host("qa-running")
        try await drill.importAdvisories()
        try await drill.sandbox.ok("advisory", "set-action", "PBSA-2026-0301", "--env", "qa", "--action", "refuse-new")
        _ = try await drill.report("qa-running") { ($0["warning"] as? String)?.contains("refuse-new in qa") == true }

        let seen = running.output.count
        let raised = try await drill.sandbox.run(["policy", "set", "--env", "qa", "--advisories", "stop"])
        #expect(raised.status == 0 && raised.stderr.isEmpty, "\(raised)")
        #expect(raised.stdout.contains("Set the advisory floor of qa to stop"), "\(raised)")
        try await Self.expectStopped(running, after: seen, environment: "qa")
        let shown = try await drill.sandbox.ok("advisory", "show", "PBSA-2026-0301", "--json").json() as? [String: Any]
        let qa = (shown?["actions"] as? [[String: Any]] ?? []).first { $0["environment"] as? String == "qa" }
        #expect(
            qa?["action"] as? String == "stop" && qa?["chosen"] as? String == "refuse-new" && qa?["floor"] as? String == "stop",
            "\(String(describing: qa))")
        // A floor that is not an action is refused in words, and changes nothing.
        let wrong = try await drill.sandbox.run(["policy", "set", "--env", "qa", "--advisories", "halt"])
        #expect(wrong.status != 0 && wrong.stdout.isEmpty && wrong.stderr.contains("halt"), "\(wrong)")
        try await drill.finish([running])
    }

    /// Waits (a guard against hanging, not a measurement) for the running host to stop alpha 1.2.0 with the advisory as
    /// the reason, then to move to 1.0.0, the highest release the advisory leaves.
    static func expectStopped(_ host: ChildProcess, after seen: Int, environment: String) async throws {
        let index = try #require(
            await host.waitForLine(after: seen, deactivated), "alpha was not stopped: \(host.output.suffix(5))")
        let event = fields(host.output[index])
        #expect(event["version"] == "1.2.0" && event["reason"] == "killed", "\(event)")
        #expect(event["message"] == "advisory PBSA-2026-0301 (\(summary)) stops \(alpha)@1.2.0 in \(environment)", "\(event)")
        #expect(await host.waitForLine(after: index) { loaded($0, "1.0.0") } != nil, "\(host.output.suffix(5))")
    }
}
