import Foundation
import PlugboardTestSupport
import Testing

/// Terminal and table injection: control characters, bidirectional overrides and invisible
/// characters are refused where a name is expected, and escaped wherever the CLI prints a table.
@Suite("terminal injection is refused or escaped", .timeLimit(.hangGuard))
struct TerminalInjectionCLITests {
    @Test func aManifestNameThatBreaksALineOrHidesTextIsRefused() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        let names = [
            "Evil\\ncom.forged.row  Forged  yes", "Tab\\there", "Red\\u001b[31m", "abc\\u202Eevil", "zero\\u200Bwidth", "bom\\uFEFF",
            "isolate\\u2066x", "del\\u007F", "c1\\u0085",
        ]
        for name in names {
            let path = try sandbox.write("m.json", "{\"id\":\"com.example.evil\",\"name\":\"\(name)\",\"version\":\"1.0.0\"}")
            let result = try await HostileInputCLITests.refused(
                sandbox, ["plugin", "register", path], "manifest field 'name'")
            #expect(result.stderr.contains("control, bidirectional or invisible characters"), "\(result.stderr)")
            #expect(!result.stderr.utf8.contains(0x1B), "no raw escape reaches the terminal")
        }
        // Names may still hold any printable text.
        try await sandbox.ok(
            "plugin", "register",
            try sandbox.write(
                "ok.json",
                manifest("com.example.ok", "1.0.0").replacingOccurrences(
                    of: "\"Test com.example.ok\"", with: "\"Kalender – 日本語 ✓\"")))
    }

    @Test func controlCharactersInStickinessFlagNamesAndReasonsAreRefused() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        try await sandbox.ok("flag", "create", "pricing.v3")
        // A malformed argument is a usage error (exit 2); the sentence shows it escaped all the same.
        let escape = try await HostileInputCLITests.usageError(
            sandbox, ["flag", "rollout", "pricing.v3", "50", "--stickiness", "\u{1B}[31mred"], "--stickiness '\\u{1b}[31mred' is not valid")
        #expect(!escape.stderr.utf8.contains(0x1B))
        try await HostileInputCLITests.usageError(
            sandbox, ["flag", "rollout", "pricing.v3", "50", "--stickiness", "user\u{202E}Id"],
            "--stickiness 'user\\u{202e}Id' is not valid")
        try await HostileInputCLITests.usageError(
            sandbox, ["flag", "create", "zero\u{200B}width"], "flag name 'zero\\u{200b}width' is not valid")
        let reason = try await HostileInputCLITests.usageError(
            sandbox, ["plugin", "kill", "com.example.calendar", "--reason", "fine\u{2067}evil"], "the reason 'fine\\u{2067}evil' contains")
        #expect(!reason.stderr.unicodeScalars.contains("\u{2067}"), "argument-parser's usage lines do not echo it raw")
        try await HostileInputCLITests.refused(
            sandbox, ["flag", "create", "x.desc", "--description", "line\u{1B}[2J"], "the description contains control")
    }

    @Test func flagNamesAndGatesThatMixScriptsAreRefused() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        try await sandbox.ok("flag", "create", "pay.gate")
        // A Cyrillic а (U+0430) in a Latin name: it passes for pay.gate on any screen.
        let cyrillic = "p\u{0430}y.gate"
        let created = try await HostileInputCLITests.usageError(
            sandbox, ["flag", "create", cyrillic], "mixes letters of the Cyrillic, Latin scripts")
        #expect(created.stderr.contains("use letters of one script"), "\(created.stderr)")
        try await HostileInputCLITests.usageError(sandbox, ["flag", "create", "pay.g\u{03BF}te"], "Greek, Latin")
        // Looking a flag up checks only the form: a flag a board already holds under such a name (from before the rule)
        // can always be switched off and archived.
        let lookup = try await sandbox.run(["flag", "disable", cyrillic])
        #expect(lookup.status == 1 && !lookup.stderr.contains("mixes letters"), "\(lookup)")
        let features = "{\"version\":2,\"features\":[{\"name\":\"\(cyrillic)\",\"type\":\"release\",\"enabled\":true,\"strategies\":[]}]}"
        try await HostileInputCLITests.refused(
            sandbox, ["flag", "import", try sandbox.write("mixed.json", features)], "mixes letters of the Cyrillic, Latin scripts")
        // A manifest names its gate flag by name: the same rule.
        let gated = manifest("com.example.gated", "1.0.0", "\"gate\":\"\(cyrillic)\"")
        try await HostileInputCLITests.refused(
            sandbox, ["plugin", "register", try sandbox.write("gated.json", gated)], "manifest field 'gate' '\(cyrillic)' is not valid")
        // One script, or the scripts one writing system uses together, with digits and punctuation: accepted.
        for name in ["Hellø_Wørld", "оплата.новая", "機能.テスト-2", "결제.flag", "checkout.v2 🚀".replacingOccurrences(of: " ", with: "")] {
            try await sandbox.ok("flag", "create", name)
        }
    }

    @Test func tablesEscapeWhatTheBoardHolds() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        // Imported flags are Unleash's: variant names and strategy parameters are free text, shown escaped.
        let features = """
            {"version":2,"features":[{"name":"evil.flag","type":"release","enabled":true,
              "strategies":[{"name":"flexibleRollout","parameters":{"rollout":"50","stickiness":"x\\u001b[31m","groupId":"g"}}],
              "variants":[{"name":"a\\nforged  row","weight":1000,"weightType":"variable","stickiness":"default"}]}]}
            """
        try await sandbox.ok("flag", "import", try sandbox.write("features.json", features))
        let show = try await sandbox.ok("flag", "show", "evil.flag")
        #expect(show.stdout.contains("a\\nforged  row:1000"), "\(show.stdout)")
        #expect(!show.stdout.contains("a\nforged"))
        // A name stored before names were checked (here written with SQL) still prints as one escaped row.
        try await sandbox.ok("plugin", "register", try sandbox.write("m2.json", manifest("com.example.other")))
        try await sandbox.boardFile.execute(
            "UPDATE plugins SET name = 'Evil' || char(10) || 'com.forged.row' || char(27) || '[31m' WHERE id = ?", "com.example.calendar")
        let list = try await sandbox.ok("plugin", "list")
        #expect(list.stdout.split(separator: "\n").count == 3, "\(list.stdout)")
        #expect(list.stdout.contains("Evil\\ncom.forged.row\\u{1b}[31m"), "\(list.stdout)")
        #expect(!list.stdout.utf8.contains(0x1B))
    }
}
