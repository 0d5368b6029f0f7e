import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Flag evaluation against files and the board, refused imports, and the audit of flag changes.
extension FlagCLITests {
    @Test func evaluateFeaturesFileMatchesTheSpecification() async throws {
        #expect(Self.specFiles.count >= 20, "spec files not found at \(FlagSpec.folder.path)")
        // No board at all: --features never opens one.
        let sandbox = try Sandbox()
        for file in Self.specFiles {
            let spec = try FlagSpec.load(file)
            let features = try sandbox.write("\(file).features.json", try FlagSpec.stateJSON(spec))
            let cases = try FlagSpec.cases(spec)
            let contexts = try sandbox.write("\(file).jsonl", FlagSpec.jsonl(cases))
            let result = try await sandbox.run(["flag", "evaluate", "--features", features, "--contexts", contexts], db: false)
            #expect(result.status == 0, "\(file): \(result)")
            try FlagSpec.expectMatches(result.stdout, cases, file: file)
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.board))
        #expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("plugboard.sqlite").path))
    }

    @Test func evaluateReadsStdinAndRefusesAMalformedLineWithNoPartialOutput() async throws {
        let sandbox = try Sandbox()
        let spec = try FlagSpec.load("08-variants.json")
        let features = try sandbox.write("features.json", try FlagSpec.stateJSON(spec))
        let cases = try FlagSpec.cases(spec)
        let fromFile = try await sandbox.run(
            ["flag", "evaluate", "--features", features, "--contexts", try sandbox.write("c.jsonl", FlagSpec.jsonl(cases))], db: false)
        let fromStdin = try await sandbox.run(
            ["flag", "evaluate", "--features", features, "--contexts", "-"], db: false, stdin: FlagSpec.jsonl(cases))
        #expect(fromStdin.status == 0, "\(fromStdin)")
        #expect(fromStdin.stdout == fromFile.stdout && !fromStdin.stdout.isEmpty)
        // Blank lines are skipped but counted; the output keeps the input order.
        let mixed = cases[0].line + "\n\n" + cases[1].line + "\r\n"
        let mixedResult = try await sandbox.run(["flag", "evaluate", "--features", features, "--contexts", "-"], db: false, stdin: mixed)
        #expect(mixedResult.stdout.split(separator: "\n").count == 2, "\(mixedResult)")

        for (bad, number) in [
            ("{\"toggle\": \"Feature.Variants.A\", \"context\": ", 3), ("[1,2]", 3), ("{\"context\": {}}", 3),
            ("{\"toggle\": 7}", 3), ("{\"toggle\":\"x\",\"context\":{\"userId\":[1]}}", 3),
        ] {
            let input = cases[0].line + "\n" + cases[1].line + "\n" + bad + "\n" + cases[2].line + "\n"
            let result = try await sandbox.run(["flag", "evaluate", "--features", features, "--contexts", "-"], db: false, stdin: input)
            #expect(result.status == 1, "\(bad): \(result)")
            #expect(result.stdout.isEmpty, "partial output for \(bad): \(result.stdout)")
            #expect(result.stderr.hasPrefix("error: --contexts line \(number):"), "\(bad): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        let missing = try await sandbox.run(["flag", "evaluate", "--features", features, "--contexts", "nowhere.jsonl"], db: false)
        #expect(missing.status == 1 && missing.stderr.contains("the contexts file nowhere.jsonl does not exist"), "\(missing)")
        let noContexts = try await sandbox.run(["flag", "evaluate", "--features", features], db: false)
        #expect(noContexts.status == 2, "\(noContexts)")
        // applicationHostname compares with --hostname (default: this machine's name).
        let hosts = try sandbox.write(
            "hosts.json",
            Self.features(
                "{\"name\":\"build.hosts\",\"enabled\":true,\"strategies\":[{\"name\":\"applicationHostname\",\"parameters\":{\"hostNames\":\"build-01,build-02\"}}]}"
            ))
        for (hostname, expected) in [("build-02", true), ("laptop", false)] {
            let result = try await sandbox.run(
                ["flag", "evaluate", "--features", hosts, "--contexts", "-", "--hostname", hostname], db: false,
                stdin: "{\"toggle\":\"build.hosts\"}\n")
            #expect(result.stdout.hasPrefix("{\"toggle\":\"build.hosts\",\"enabled\":\(expected),"), "\(hostname): \(result)")
        }
        let badFeatures = try await sandbox.run(
            [
                "flag", "evaluate", "--features", try sandbox.write("bad.json", "{\"version\":1,\"features\":[{\"name\":\"x\"}]}"),
                "--contexts", "-",
            ], db: false, stdin: "")
        #expect(
            badFeatures.status == 1 && badFeatures.stderr.contains("flag 'x'") && badFeatures.stderr.contains("enabled"), "\(badFeatures)")
    }

    @Test func evaluateFromTheBoardMatchesTheFeaturesFile() async throws {
        let sandbox = try await Sandbox.withBoard()
        let file = "15-global-constraints.json"
        let spec = try FlagSpec.load(file)
        let dropped = FlagSpec.refusedByTheBoard[file] ?? []
        let features = try sandbox.write("features.json", try FlagSpec.stateJSON(spec, dropping: dropped))
        try await sandbox.ok("flag", "import", features, "--env", "production")
        let cases = try FlagSpec.cases(spec, dropping: dropped)
        let contexts = try sandbox.write("c.jsonl", FlagSpec.jsonl(cases))
        let fromFile = try await sandbox.run(["flag", "evaluate", "--features", features, "--contexts", contexts], db: false)
        let fromBoard = try await sandbox.run(["flag", "evaluate", "--env", "production", "--contexts", contexts])
        #expect(fromBoard.status == 0, "\(fromBoard)")
        #expect(FlagSpec.deterministic(fromBoard.stdout, cases) == FlagSpec.deterministic(fromFile.stdout, cases))
        try FlagSpec.expectMatches(fromBoard.stdout, cases, file: file)
        // The other environment has the flags (board-wide) but off.
        let fromDefault = try await sandbox.run(["flag", "evaluate", "--contexts", contexts])
        #expect(fromDefault.status == 0 && !fromDefault.stdout.contains("\"enabled\":true"), "\(fromDefault)")
        // A typo in --env is refused, not taken for an environment where every flag is off.
        for command in [["flag", "evaluate", "--contexts", contexts], ["flag", "export"]] {
            let typo = try await sandbox.run(command + ["--env", "prodution"])
            #expect(typo.status == 1 && typo.stdout.isEmpty, "\(command): \(typo)")
            #expect(typo.stderr.contains("environment 'prodution' does not exist"), "\(command): \(typo.stderr)")
        }
    }

    // MARK: import refusals

    struct BadImport {
        let name: String
        let json: String
        /// Substrings stderr must contain: the flag's name and the field.
        let expected: [String]
    }

    static func features(_ members: String...) -> String { "{\"version\":1,\"features\":[\(members.joined(separator: ","))]}" }
    static func flag(_ name: String, _ constraint: String) -> String {
        "{\"name\":\"\(name)\",\"enabled\":true,\"strategies\":[{\"name\":\"default\",\"constraints\":[\(constraint)]}]}"
    }

    static let badImports: [BadImport] = [
        BadImport(
            name: "malformed JSON", json: "{\"version\":1,\"features\":[{\"name\":\"half.written\",\"enabled\":true,",
            expected: ["not valid JSON"]),
        BadImport(
            name: "wrong type of field", json: features("{\"name\":\"typo.enabled\",\"enabled\":\"yes\"}"),
            expected: ["flag 'typo.enabled'", "enabled"]),
        BadImport(name: "missing enabled", json: features("{\"name\":\"no.enabled\"}"), expected: ["flag 'no.enabled'", "enabled"]),
        BadImport(
            name: "unknown operator",
            json: features(flag("bad.operator", "{\"contextName\":\"userId\",\"operator\":\"REGEX_MATCHES\",\"values\":[\"1\"]}")),
            expected: ["flag 'bad.operator'", "operator", "REGEX_MATCHES"]),
        BadImport(
            name: "invalid regex",
            json: features(flag("bad.regex", "{\"contextName\":\"email\",\"operator\":\"REGEX\",\"value\":\"(unclosed\"}")),
            expected: ["flag 'bad.regex'", "constraint 1", "(unclosed"]),
        BadImport(
            name: "invalid CIDR",
            json: features(flag("bad.cidr", "{\"contextName\":\"remoteAddress\",\"operator\":\"IN_CIDR\",\"values\":[\"10.0.0.0/33\"]}")),
            expected: ["flag 'bad.cidr'", "constraint 1", "10.0.0.0/33"]),
        BadImport(
            name: "invalid semver",
            json: features(flag("bad.semver", "{\"contextName\":\"version\",\"operator\":\"SEMVER_GT\",\"value\":\"1.2\"}")),
            expected: ["flag 'bad.semver'", "constraint 1", "1.2"]),
        BadImport(
            name: "dependency cycle",
            json: features(
                "{\"name\":\"cycle.a\",\"enabled\":true,\"dependencies\":[{\"feature\":\"cycle.b\"}]}",
                "{\"name\":\"cycle.b\",\"enabled\":true,\"dependencies\":[{\"feature\":\"cycle.a\"}]}"),
            expected: ["cycle.a", "cycle.b", "cycle"]),
        BadImport(
            name: "rollout of 150",
            json: features(
                "{\"name\":\"too.much\",\"enabled\":true,\"strategies\":[{\"name\":\"flexibleRollout\",\"parameters\":{\"rollout\":\"150\",\"stickiness\":\"default\",\"groupId\":\"g\"}}]}"
            ),
            expected: ["flag 'too.much'", "strategy 1", "150"]),
        BadImport(
            name: "unknown segment",
            json: features("{\"name\":\"seg.user\",\"enabled\":true,\"strategies\":[{\"name\":\"default\",\"segments\":[99]}]}"),
            expected: ["flag 'seg.user'", "strategy 1", "99"]),
        BadImport(
            name: "the same flag twice",
            json: features("{\"name\":\"twice\",\"enabled\":true}", "{\"name\":\"twice\",\"enabled\":false}"),
            expected: ["flag 'twice'", "twice"]),
        BadImport(
            name: "negative variant weight",
            json: features("{\"name\":\"bad.weight\",\"enabled\":true,\"variants\":[{\"name\":\"a\",\"weight\":-5}]}"),
            expected: ["flag 'bad.weight'", "variant 1"]),
        BadImport(
            name: "a cycle through a flag already on the board",
            json: features("{\"name\":\"board.child\",\"enabled\":true,\"dependencies\":[{\"feature\":\"board.parent\"}]}"),
            expected: ["board.child", "board.parent", "cycle"]),
    ]

    /// One board for every case: a refused import changes nothing, so each case starts from the same board.
    @Test func anInvalidImportIsRefusedAndChangesNothing() async throws {
        let sandbox = try await Sandbox.withBoard()
        // A board with flags and a segment already, one of which depends on board.child.
        try await sandbox.ok(
            "flag", "import",
            try sandbox.write(
                "good.json",
                """
                {"version":1,"segments":[{"id":1,"name":"beta","constraints":[{"contextName":"userId","operator":"IN","values":["1"]}]}],
                 "features":[{"name":"board.parent","enabled":true,"dependencies":[{"feature":"board.child"}]},
                             {"name":"board.child","enabled":true,"strategies":[{"name":"default","segments":[1]}]}]}
                """))
        let before = try await sandbox.snapshot()
        for bad in Self.badImports {
            let path = try sandbox.write("bad.json", bad.json)
            let result = try await sandbox.run(["flag", "import", path])
            #expect(result.status == 1, "\(bad.name): \(result)")
            #expect(result.stdout.isEmpty, "\(bad.name)")
            #expect(result.stderr.hasPrefix("error: "), "\(bad.name)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(bad.name): one sentence, one line: \(result.stderr)")
            for expected in bad.expected { #expect(result.stderr.contains(expected), "\(bad.name): \(result.stderr)") }
            #expect(!result.stderr.contains("SQLite"), "\(bad.name)")
            #expect(try await sandbox.snapshot() == before, "\(bad.name) changed the board")
        }
    }

    // MARK: audit and permissions

    @Test func everyFlagChangeIsAuditedWithBeforeAndAfter() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "audited", "--type", "experiment")
        try await sandbox.ok("flag", "enable", "audited", "--env", "production")
        try await sandbox.ok("flag", "rollout", "audited", "10", "--env", "production")
        try await sandbox.ok("flag", "rollout", "audited", "30", "--env", "production", "--as", "ci-bot")
        try await sandbox.ok("flag", "disable", "audited", "--env", "production")
        try await sandbox.ok("flag", "archive", "audited")
        try await sandbox.ok("flag", "unarchive", "audited")
        try await sandbox.ok(
            "flag", "import", try sandbox.write("f.json", Self.features("{\"name\":\"audited\",\"type\":\"experiment\",\"enabled\":true}")))
        // Nothing-to-do commands write no row.
        try await sandbox.ok("flag", "rollout", "audited", "30", "--env", "production")

        let rows = try await sandbox.boardFile.rows("SELECT * FROM audit_log WHERE target_type = 'flag' ORDER BY seq")
        #expect(
            rows.map { $0["action"]?.string } == [
                "flag.create", "flag.enable", "flag.rollout", "flag.rollout", "flag.disable",
                "flag.archive", "flag.unarchive", "flag.import",
            ])
        #expect(
            rows.allSatisfy {
                $0["target_id"]?.string == "audited" && $0["outcome"]?.string == "ok" && $0["after_json"]?.string != nil
            })
        #expect(rows.dropFirst().allSatisfy { $0["before_json"]?.string != nil }, "every change after create records the before state")

        let rollout = rows[3]
        #expect(rollout["environment"]?.string == "production")
        #expect(rollout["on_behalf_of"]?.string == "ci-bot")
        let (beforeJSON, afterJSON) = (try #require(rollout["before_json"]?.string), try #require(rollout["after_json"]?.string))
        let before = try #require(try jsonObject(beforeJSON) as? [String: Any])
        let after = try #require(try jsonObject(afterJSON) as? [String: Any])
        let strategy = { (state: [String: Any]) in ((state["strategies"] as? [[String: Any]])?.first?["parameters"] as? [String: String]) }
        #expect(strategy(before) == ["rollout": "10", "stickiness": "default", "groupId": "audited"])
        #expect(strategy(after) == ["rollout": "30", "stickiness": "default", "groupId": "audited"])
        #expect(before["enabled"] as? Bool == true && after["enabled"] as? Bool == true)
        #expect((try jsonObject(try #require(rows[1]["before_json"]?.string)) as? [String: Any])?["enabled"] as? Bool == false)
        #expect((try jsonObject(try #require(rows[1]["after_json"]?.string)) as? [String: Any])?["enabled"] as? Bool == true)
        #expect(try await sandbox.ok("audit", "--target", "audited").stdout.contains("flag.rollout"))
        let verified = try await sandbox.ok("audit", "verify")
        #expect(verified.stdout.contains("intact"), "\(verified)")
    }

    @Test(.enabled(if: canSwitchUser, "needs root and setpriv to act as another OS user"))
    func importNeedsAnAdminAndFlagsTheirOwner() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "root.flag")
        chown(sandbox.root.path, 65534, 65534)
        chown(sandbox.board, 65534, 65534)
        let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        let features = try sandbox.write("f.json", Self.features("{\"name\":\"root.flag\",\"enabled\":true}"))
        chown(features, 65534, 65534)

        let before = try await sandbox.ok("flag", "export").stdout
        let imported = try await sandbox.run(["flag", "import", features], prefix: asNobody)
        #expect(imported.status == 1, "\(imported)")
        #expect(imported.stderr.contains("nobody may not import flags: only a board admin may"), "\(imported.stderr)")
        for arguments in [["flag", "enable", "root.flag"], ["flag", "rollout", "root.flag", "50"], ["flag", "archive", "root.flag"]] {
            let refused = try await sandbox.run(arguments, prefix: asNobody)
            #expect(refused.status == 1, "\(arguments): \(refused)")
            #expect(refused.stderr.contains("nobody may not change flag 'root.flag': only its owner"), "\(refused.stderr)")
        }
        #expect(try await sandbox.ok("flag", "export").stdout == before)

        // Anyone may create a flag; its creator may change it, and so may an admin.
        let created = try await sandbox.run(["flag", "create", "nobody.flag"], prefix: asNobody)
        #expect(created.status == 0, "\(created)")
        let own = try await sandbox.run(["flag", "enable", "nobody.flag"], prefix: asNobody)
        #expect(own.status == 0, "\(own)")
        #expect(try await sandbox.flagDetail("nobody.flag")["owner"] as? String == "nobody")
        try await sandbox.ok("flag", "rollout", "nobody.flag", "20")

        let refusals = try await sandbox.boardFile.rows(
            "SELECT actor, action, target_id, reason FROM audit_log WHERE outcome = 'refused' ORDER BY seq")
        #expect(refusals.map { $0["action"]?.string } == ["flag.import", "flag.enable", "flag.rollout", "flag.archive"])
        #expect(refusals.allSatisfy { $0["actor"]?.string == "nobody" && $0["reason"]?.string?.isEmpty == false })
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }
}
