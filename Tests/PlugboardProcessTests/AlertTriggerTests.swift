import Foundation
import PlugboardTestSupport
import Testing

/// `plugboard serve --admin`'s Alertmanager trigger (`POST /api/triggers/alertmanager`) and the access tokens of scope
/// stop, in processes: the CLI makes the tokens, serve runs in its own process, curl posts what Alertmanager posts.
@Suite("the alerting trigger and stop tokens (processes)", .timeLimit(.hangGuard), .serialized)
struct AlertTriggerTests {
    static let alpha = "com.example.alpha"
    static let beta = "com.example.beta"
    static let gamma = "com.example.gamma"

    /// A board with three plug-ins, served with `--admin`, and a stop token of the OS user who made it.
    static func served() async throws -> (served: OperationsAPITests.Served, stopToken: String) {
        let sandbox = try await Sandbox.withBoard([manifest(alpha), manifest(beta, "2.0.0"), manifest(gamma)])
        let served = try await OperationsAPITests.serve(sandbox)
        let created = try await sandbox.ok("access-token", "create", "--name", "alerts", "--scope", "stop", "--json").json()
        let token = try #require((created as? [String: Any])?["token"] as? String)
        return (served, token)
    }

    /// Alertmanager's webhook message (version 4) with `alerts`, each `(status, labels, annotations)`.
    static func message(_ alerts: [(String, [String: String], [String: String])]) throws -> String {
        let objects: [[String: Any]] = alerts.enumerated().map { index, alert in
            [
                "status": alert.0, "labels": alert.1, "annotations": alert.2, "fingerprint": String(format: "%016x", index + 1),
                "startsAt": "2026-12-01T03:00:00Z", "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus/graph",
            ]
        }
        let body: [String: Any] = [
            "version": "4", "groupKey": "{}:{alertname=\"HighErrorRate\"}", "truncatedAlerts": 0, "status": "firing",
            "receiver": "plugboard",
            "groupLabels": [:] as [String: String], "commonLabels": [:] as [String: String], "commonAnnotations": [:] as [String: String],
            "externalURL": "http://alertmanager:9093", "alerts": objects,
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Posts `body` to the trigger with `token`; the status and the answer's JSON object (empty when it is none).
    static func post(_ served: OperationsAPITests.Served, _ body: String, token: String) async throws -> (Int, [String: Any]) {
        let file = try served.sandbox.write("alert-\(UUID().uuidString).json", body)
        let answer = try await Curl.run([
            "-X", "POST", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json", "--data-binary", "@\(file)",
            "\(served.url)/api/triggers/alertmanager",
        ])
        let object = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any] ?? [:]
        return (answer.status, object)
    }

    /// The audit rows of `target`'s kill switches, newest last.
    static func kills(_ sandbox: Sandbox, _ target: String) async throws -> [[String: Any]] {
        try await sandbox.ok("audit", "--target", target, "--json").stdout.split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["action"] as? String == "plugin.kill" && $0["result"] as? String != "refused" }
    }

    /// Whether `id` has an active kill switch (over it or one of its versions).
    static func killed(_ sandbox: Sandbox, _ id: String) async throws -> Bool {
        let shown = try await sandbox.ok("plugin", "show", id, "--json").json() as? [String: Any]
        return (shown?["kill_switches"] as? [Any])?.isEmpty == false
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func aFiringAlertKillsWhatItNamesAndAResolvedOneRevivesNothing() async throws {
        let (served, stopToken) = try await Self.served()
        defer { Task { await served.stop() } }
        let sandbox = served.sandbox
        let listed = try await sandbox.ok("access-token", "list").stdout
        #expect(listed.contains("alerts") && listed.contains("stop only"), "\(listed)")

        let firing = try Self.message([
            ("firing", ["alertname": "HighErrorRate", "plugin": Self.alpha], ["summary": "alpha answers 5xx to 12% of calls"]),
            ("firing", ["alertname": "HighErrorRate", "plugin": "com.example.missing"], [:]),
            ("firing", ["alertname": "DiskFull"], [:]),
            ("resolved", ["alertname": "HighErrorRate", "plugin": Self.gamma], [:]),
            ("firing", ["alertname": "Crashes", "plugin": Self.beta, "version": "2.0.0"], [:]),
        ])
        let (status, answer) = try await Self.post(served, firing, token: stopToken)
        #expect(status == 200, "\(answer)")
        let stopped = answer["stopped"] as? [[String: Any]] ?? []
        #expect(stopped.compactMap { $0["plugin"] as? String } == [Self.alpha, Self.beta], "\(answer)")
        #expect(stopped.last?["version"] as? String == "2.0.0", "\(answer)")
        let skipped = answer["skipped"] as? [[String: Any]] ?? []
        #expect(skipped.count == 3, "\(answer)")
        #expect(
            skipped.contains { $0["plugin"] as? String == "com.example.missing" && "\($0["message"] ?? "")".contains("not registered") })
        #expect(skipped.contains { "\($0["message"] ?? "")".hasPrefix("resolved") })

        #expect(try await Self.killed(sandbox, Self.alpha))
        #expect(!(try await Self.killed(sandbox, Self.gamma)))
        let kill = try #require(try await Self.kills(sandbox, Self.alpha).last)
        #expect(kill["reason"] as? String == "alpha answers 5xx to 12% of calls", "\(kill)")
        #expect((kill["via"] as? String)?.hasPrefix("alertmanager alert HighErrorRate (token alerts from 127.0.0.1") == true, "\(kill)")
        let version = try #require(try await Self.kills(sandbox, "\(Self.beta)@2.0.0").last, "the version's kill")
        #expect(version["reason"] as? String == "Crashes", "\(version)")

        // The same alert again changes nothing; resolved, it revives nothing.
        let (again, repeated) = try await Self.post(served, firing, token: stopToken)
        #expect(again == 200 && (repeated["stopped"] as? [Any])?.isEmpty == true, "\(repeated)")
        #expect((repeated["unchanged"] as? [Any])?.count == 2, "\(repeated)")
        let resolved = try Self.message([
            ("resolved", ["alertname": "HighErrorRate", "plugin": Self.alpha], ["summary": "alpha answers 5xx to 12% of calls"])
        ])
        let (resolvedStatus, _) = try await Self.post(served, resolved, token: stopToken)
        #expect(resolvedStatus == 200)
        #expect(try await Self.killed(sandbox, Self.alpha))
        #expect(try await Self.kills(sandbox, Self.alpha).count == 1)
        let revives = try await sandbox.ok("audit", "--json").stdout.split(separator: "\n").filter { $0.contains("\"plugin.revive\"") }
        #expect(revives.isEmpty, "\(revives)")

        // An admin's ordinary token may stop through the trigger too; a read-only token may not.
        let (adminStatus, adminAnswer) = try await Self.post(
            served, try Self.message([("firing", ["alertname": "Latency", "plugin": Self.gamma], [:])]), token: served.token)
        #expect(adminStatus == 200 && (adminAnswer["stopped"] as? [Any])?.count == 1, "\(adminAnswer)")
        // Both kills are the token's principal's, the OS user who made the board.
        let adminKill = try #require(try await Self.kills(sandbox, Self.gamma).last)
        #expect(kill["actor"] as? String == adminKill["actor"] as? String && kill["actor"] != nil, "\(kill) \(adminKill)")
        #expect((adminKill["via"] as? String)?.hasPrefix("alertmanager alert Latency (token tests from ") == true, "\(adminKill)")
        let viewer = try await sandbox.ok("access-token", "create", "--name", "viewer", "--read-only", "--json").json()
        let viewerToken = try #require((viewer as? [String: Any])?["token"] as? String)
        let (readOnlyStatus, readOnlyAnswer) = try await Self.post(served, firing, token: viewerToken)
        #expect(readOnlyStatus == 403 && "\(readOnlyAnswer["message"] ?? "")".contains("read-only"), "\(readOnlyAnswer)")

        let verified = try await sandbox.ok("audit", "verify").stdout
        #expect(verified.contains("The audit log is intact"), "\(verified)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func aStopTokenIsRefusedEverythingButTheTrigger() async throws {
        let (served, stopToken) = try await Self.served()
        defer { Task { await served.stop() } }
        let sentence = "may only stop plug-ins through POST /api/triggers/alertmanager"
        for command in [
            ["plugin", "enable", Self.alpha], ["plugin", "kill", Self.alpha, "--reason", "through the API"], ["plugin", "list"],
            ["flag", "create", "checkout.v2"], ["access-token", "create", "--name", "child"], ["access-token", "list"],
        ] {
            let result = try await served.run(command, token: stopToken)
            #expect(result.status != 0 && result.stderr.contains(sentence), "\(command): \(result)")
        }
        let whoami = try await Curl.run(["-H", "Authorization: Bearer \(stopToken)", "\(served.url)/api/admin/whoami"])
        #expect(whoami.status == 403 && whoami.body.contains(sentence), "\(whoami)")
        #expect(!(try await Self.killed(served.sandbox, Self.alpha)))

        // The console's sign-in takes it no more.
        let form = try await ConsoleSignInProcessTests.signInForm(served.url)
        let signIn = try await ConsoleSignInProcessTests.postSignIn(served.url, stopToken, form: form, headers: ["Origin: \(served.url)"])
        #expect(signIn.status == 403 && signIn.body.contains("may only stop plug-ins"), "\(signIn.status) \(signIn.body)")

        // What a sender sends never breaks the server: not JSON, the wrong shape, too large, too many alerts.
        let (notJSON, notJSONAnswer) = try await Self.post(served, "{\"alerts\": [", token: stopToken)
        #expect(
            notJSON == 400 && notJSONAnswer["message"] as? String == "the body is not JSON; send Alertmanager's webhook message (version 4)"
        )
        let (wrong, wrongAnswer) = try await Self.post(served, #"{"alerts": [{"labels": {"plugin": 7}}]}"#, token: stopToken)
        #expect(wrong == 400 && "\(wrongAnswer["message"] ?? "")".contains("alerts[0].labels"), "\(wrongAnswer)")
        let (large, _) = try await Self.post(served, String(repeating: " ", count: 300 << 10) + "{}", token: stopToken)
        #expect(large == 413)
        let many = try Self.message(Array(repeating: ("firing", ["plugin": Self.alpha], [:]), count: 1001))
        let (tooMany, tooManyAnswer) = try await Self.post(served, many, token: stopToken)
        #expect(tooMany == 413 && "\(tooManyAnswer["message"] ?? "")".contains("max_alerts"), "\(tooManyAnswer)")
        let (still, _) = try await Self.post(served, try Self.message([]), token: stopToken)
        #expect(still == 200)
    }
}
