import Foundation
import PlugboardTestSupport
import Testing

/// Bad input gets exit 1 (exit 2 when a command-line argument is malformed: a usage error), one clear sentence on
/// stderr, nothing on stdout, and leaves the board byte-for-byte unchanged.
@Suite("bad input changes nothing", .timeLimit(.hangGuard))
struct BadInputCLITests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let manifest: String?
        let arguments: [String]
        let stderrContains: String
        /// 1 for a refusal, 2 for a malformed argument (argument-parser then adds the usage after the sentence).
        var status: Int32 = 1
        var testDescription: String { name }

        init(_ name: String, manifest: String, _ stderrContains: String) {
            self.name = name
            self.manifest = manifest
            self.arguments = []
            self.stderrContains = stderrContains
        }

        init(_ name: String, arguments: [String], _ stderrContains: String, status: Int32 = 1) {
            self.name = name
            self.manifest = nil
            self.arguments = arguments
            self.stderrContains = stderrContains
            self.status = status
        }
    }

    static let cases: [Case] = [
        Case("malformed JSON", manifest: "{\"id\": \"com.example.x\", ", "not valid JSON"),
        Case("not an object", manifest: "[1, 2]", "must be a JSON object"),
        Case("unknown field", manifest: manifest("com.example.x", "1.0.0", "\"hots\":\">=1.0.0\""), "unknown field 'hots'"),
        Case("missing id", manifest: "{\"name\":\"X\",\"version\":\"1.0.0\"}", "missing the required field 'id'"),
        Case("missing version", manifest: "{\"id\":\"com.example.x\",\"name\":\"X\"}", "missing the required field 'version'"),
        Case("missing name", manifest: "{\"id\":\"com.example.x\",\"version\":\"1.0.0\"}", "missing the required field 'name'"),
        Case("id not a string", manifest: "{\"id\":42,\"name\":\"X\",\"version\":\"1.0.0\"}", "'id' must be a string"),
        Case("bad id: upper case", manifest: manifest("Com.Example.X"), "is not valid"),
        Case("bad id: one label", manifest: manifest("calendar"), "at least two dot-separated labels"),
        Case("bad id: empty label", manifest: manifest("com..x"), "empty label"),
        Case("bad version: leading zero", manifest: manifest("com.example.x", "1.02.0"), "leading zero"),
        Case("bad version: two parts", manifest: manifest("com.example.x", "1.2"), "MAJOR.MINOR.PATCH"),
        Case("bad version: prefix v", manifest: manifest("com.example.x", "v1.2.3"), "not a number"),
        Case("bad host range", manifest: manifest("com.example.x", "1.0.0", "\"host\":\">=2.0.0 <<3\""), "manifest field 'host'"),
        Case(
            "bad dependency range", manifest: manifest("com.example.x", "1.0.0", "\"dependencies\":{\"com.example.auth\":\"^1.x.y.z\"}"),
            "range for com.example.auth is invalid"),
        Case(
            "dependency on itself", manifest: manifest("com.example.x", "1.0.0", "\"dependencies\":{\"com.example.x\":\"^1.0.0\"}"),
            "depends on itself"),
        Case(
            "bad dependency id", manifest: manifest("com.example.x", "1.0.0", "\"dependencies\":{\"Auth\":\"^1.0.0\"}"),
            "dependency 'Auth' is not valid"),
        Case(
            "unknown capability", manifest: manifest("com.example.x", "1.0.0", "\"capabilities\":[\"root-shell\"]"),
            "not a known capability"),
        Case("bad entry symbol", manifest: manifest("com.example.x", "1.0.0", "\"entry\":\"9 lives\""), "C symbol"),
        Case(
            "metadata not an object", manifest: manifest("com.example.x", "1.0.0", "\"metadata\":\"team\""),
            "'metadata' must be a JSON object"),
        Case(
            "artifact that does not exist", arguments: ["plugin", "register", "MANIFEST", "--artifact", "/nonexistent/lib.so"],
            "does not exist"),
        Case("manifest file that does not exist", arguments: ["plugin", "register", "/nonexistent/manifest.json"], "does not exist"),
        Case("unknown plug-in to enable", arguments: ["plugin", "enable", "com.example.x"], "is not registered"),
        Case("bad id on the command line", arguments: ["plugin", "enable", "NOT AN ID"], "is not valid", status: 2),
        Case(
            "bad environment", arguments: ["plugin", "enable", "com.example.calendar", "--env", "Prod!"],
            "environment 'Prod!' is not valid",
            status: 2),
        Case("empty reason", arguments: ["plugin", "kill", "com.example.calendar", "--reason", "  "], "the reason is empty", status: 2),
        Case("bad checkpoint", arguments: ["audit", "verify", "--checkpoint", "12:zz"], "checkpoint '12:zz' is not valid", status: 2),
        Case("bad --since", arguments: ["audit", "--since", "yesterday"], "--since 'yesterday' is not a time", status: 2),
    ]

    @Test(arguments: cases)
    func refusedWithOneSentenceAndNothingChanged(_ badCase: Case) async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        let manifestPath = try sandbox.write("bad.json", badCase.manifest ?? manifest("com.example.new"))
        let arguments =
            badCase.manifest != nil ? ["plugin", "register", manifestPath] : badCase.arguments.map { $0 == "MANIFEST" ? manifestPath : $0 }
        let before = try await sandbox.snapshot()
        let result = try await sandbox.run(arguments)
        #expect(result.status == badCase.status, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("error: "))
        let sentence = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(sentence.contains(badCase.stderrContains), "\(result.stderr)")
        if badCase.status == 1 {
            #expect(result.stderr.split(separator: "\n").count == 1, "one sentence, one line: \(result.stderr)")
        } else {
            #expect(result.stderr.contains("Usage: "), "a usage error shows the usage: \(result.stderr)")
        }
        #expect(!result.stderr.contains("SQLite error"))
        // "Not found" refusals are audited; everything else leaves the board byte-for-byte as it was.
        if badCase.stderrContains != "is not registered" {
            #expect(try await sandbox.snapshot() == before)
        }
    }

    @Test func aBoardThatIsNotABoardIsRefusedAndLeftAlone() async throws {
        let sandbox = try Sandbox()
        let cases: [(String, Data)] = [
            ("text.sqlite", Data("hello, I am a text file\n".utf8)),
            ("empty.sqlite", Data()),
        ]
        for (name, content) in cases {
            let path = sandbox.root.appendingPathComponent(name).path
            try content.write(to: URL(fileURLWithPath: path))
            let result = try await sandbox.run(["plugin", "list", "--db", path], db: false)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("is not a Plugboard board"))
            #expect(try FileBytes.read(path) == content)
        }
        // An SQLite database of another application.
        let other = sandbox.root.appendingPathComponent("other.sqlite").path
        try await BoardSQL(other).execute("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')")
        let bytes = try FileBytes.read(other)
        for arguments in [
            ["plugin", "list"], ["plugin", "register", try sandbox.write("m.json", manifest())], ["migrate"], ["audit", "verify"],
        ] {
            let result = try await sandbox.run(arguments + ["--db", other], db: false)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("not a Plugboard board"))
        }
        #expect(try FileBytes.read(other) == bytes)
        let missing = try await sandbox.run(
            ["plugin", "list", "--db", sandbox.root.appendingPathComponent("nothing.sqlite").path], db: false)
        #expect(missing.status == 1 && missing.stderr.contains("plugboard init"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("nothing.sqlite").path))
    }

    @Test func usageErrorsExitTwo() async throws {
        let sandbox = try await Sandbox.withBoard()
        for arguments in [["plugin", "frobnicate"], ["plugin", "enable"], ["--no-such-flag"], ["audit", "--limit", "0"]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
        }
        // Global options may come before the subcommand.
        let sandbox2 = try Sandbox()
        let early = try await sandbox2.run(["--db", sandbox2.board, "--json", "init"], db: false)
        #expect(early.status == 0, "\(early)")
        #expect(try (early.json() as? [String: Any])?["admin"] != nil)
    }
}
