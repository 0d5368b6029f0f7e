import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import Testing

/// Every declared operation, from the CLI's words to the wire and back, and what an operation made empty does.
@Suite("operations: every declaration round-trips, an empty one is refused", .timeLimit(.hangGuard))
struct OperationRoundTripTests {
    /// Fields that exclude the others of their operation (a kill's `--all` and its id): left at their defaults.
    static let exclusive: Set<String> = [
        "plugin.kill.all", "plugin.revive.all", "policy.set.signatures", "policy.set.advisories", "signer.add.all", "change.schedule.clear",
        "flag.list.unused",
    ]

    /// A value `field` of operation `name` accepts, as the CLI's words give it.
    static func sample(_ name: String, _ field: OperationWire.Field) -> [String] {
        if let choice = field.choices.first { return [choice] }
        if field.json == .integer { return ["7"] }
        switch (name, field.name) {
        case ("signer.add", "id_and_key"): return ["com.example.sample", "MCowBQYDK2VwAyEAsample"]
        case (_, "id"), (_, "plugin"),
            (_, "after") where name == "plugin.list":
            return ["com.example.sample"]
        case (let operation, "name") where operation.hasPrefix("flag."): return ["sample.flag"]
        case ("signer.add", "name"): return ["Alice"]
        case (_, "name"): return ["laptop"]
        case (_, "version"): return ["1.2.3"]
        case (_, "env"): return ["staging"]
        case (_, "host"): return ["host-1"]
        case (_, "principal"): return ["alice"]
        case (_, "group"): return ["ops"]
        case (_, "issuer"): return ["https://login.example.com"]
        case (_, "subject"): return ["00u1abcd"]
        case ("webhook.add", "url"): return ["https://hooks.example.com/ops"]
        case ("webhook.add", "events"): return ["plugin.kill,change.*"]
        case (_, "key_id"): return ["0123456789abcdef"]
        case (_, "steps"): return ["1,10,50,100"]
        case (_, "every"): return ["10m"]
        case (_, "max_failure_rate"): return ["5"]
        case (_, "expires"): return ["90d"]
        case (_, "since"), (_, "at"): return ["2026-12-01T00:00:00Z"]
        case (_, "stickiness"): return ["default"]
        case (_, "approvers"): return ["admins"]
        case (_, "features"): return [#"{"version":1,"features":[]}"#]
        case (_, "value_base64"): return ["c2VjcmV0"]
        case ("advisory-feed.subscribe", "url"): return ["https://advisories.example.com/feed.json"]
        case ("advisory-feed.subscribe", "interval"): return ["1h"]
        case ("advisory-feed.subscribe", "key"): return [Data(repeating: 7, count: 32).base64EncodedString()]
        case (_, "key"): return ["api-key"]
        case (_, "checkpoint"): return ["7:" + String(repeating: "ab", count: 32)]
        case (_, "file"): return ["sample.json"]
        default: return ["a sample \(field.name)"]
        }
    }

    /// The CLI's words that set every field of `type` (but the exclusive ones) to a sample, and its `env`.
    static func words<Op: ParsedOperation>(for type: Op.Type) throws -> (words: [String], env: String?) {
        var options: [String] = []
        var positionals: [String] = []
        var env: String?
        for field in try OperationWire.describedFields(of: type) where !exclusive.contains("\(Op.name).\(field.name)") {
            let values = sample(Op.name, field)
            switch field.kind {
            case .positional: positionals += values
            case .option(let name): options += values.map { "--\(name)=\($0)" }
            case .flag(let name): options.append("--\(name)")
            case .context: env = values.first
            }
        }
        return (options + (positionals.isEmpty ? [] : ["--"] + positionals), env)
    }

    /// CLI words → operation → wire JSON → operation → wire JSON: the same JSON, holding every field set.
    func roundTrip<Op: ParsedOperation>(_ type: Op.Type) throws {
        let (words, env) = try Self.words(for: type)
        var parsed: Op
        do { parsed = try Op.parse(words) } catch {
            Issue.record("\(Op.name) refuses its sample words \(words): \(Op.message(for: error))")
            return
        }
        parsed.env = env
        let body = try parsed.wireBody()
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any], "\(Op.name)")
        // A flag travels as true or false, set or not.
        let expected = try OperationWire.describedFields(of: type).filter { field in
            if case .flag = field.kind { return true }
            return !Self.exclusive.contains("\(Op.name).\(field.name)")
        }.map(\.name)
        #expect(Set(json.keys) == Set(expected), "\(Op.name): \(String(decoding: body, as: UTF8.self))")
        let decoded = try Op.fromWire(body)
        #expect(try decoded.wireBody() == body, "\(Op.name): \(String(decoding: body, as: UTF8.self))")
    }

    @Test func everyDeclaredOperationRoundTripsFromTheCLIsWordsWithEveryFieldSet() throws {
        var count = 0
        for type in OperationsAPI.requests {
            guard let type = type as? any ParsedOperation.Type else { continue }
            try roundTrip(type)
            count += 1
        }
        #expect(count == OperationsAPI.requests.count - 1)  // all but plugin.register, whose request is its own Codable type
    }

    @Test func everyOperationsFieldsMatchArgumentParsersDescriptionOfThem() throws {
        for type in OperationsAPI.requests {
            guard let type = type as? any ParsedOperation.Type else { continue }
            #expect(throws: Never.self, "\(type.name)") { _ = try OperationWire.describedFields(of: type) }
        }
    }

    @Test func aDescriptionThatDoesNotMatchTheFieldsIsRefusedNeverEmpty() throws {
        let kill = PluginOperations.Kill.self
        let properties = OperationWire.wireProperties(of: kill.init())
        let reason = try JSONDecoder().decode(
            OperationWire.ToolInfo.Argument.self,
            from: Data(#"{"kind":"option","isOptional":false,"isRepeating":false,"preferredName":{"name":"reason"}}"#.utf8))
        let flag = try JSONDecoder().decode(
            OperationWire.ToolInfo.Argument.self, from: Data(#"{"kind":"flag","isOptional":true,"isRepeating":false}"#.utf8))
        func refusal(_ described: [OperationWire.ToolInfo.Argument]) -> String? {
            do {
                _ = try OperationWire.fields(of: kill, properties: properties, described: described)
                return nil
            } catch { return error.description }
        }
        #expect(refusal([]) == "plugin.kill: argument-parser describes no argument for its field id")
        #expect(refusal([reason, reason, flag, reason]) == "plugin.kill: its field id is positional, argument-parser describes option")
        let fields = OperationWire.fields(of: kill)
        #expect(fields.count == 4)
    }

    @Test func anOperationMadeEmptyIsRefusedWithASentenceNamingItsField() throws {
        let folder = try BoardFileTests.Folder()
        let admin = BoardFileTests.admin
        let board = try BoardFile.create(at: folder.path + "/board.sqlite", by: admin)
        func refusal<Op: BoardOperation>(_ operation: Op) -> String? {
            do {
                _ = try board.perform(operation, as: admin)
                return nil
            } catch { return error.message }
        }
        #expect(
            refusal(PluginOperations.Kill())
                == "plugin.kill has no value for its field id: make the operation with its typed initializer, not init(), which leaves the fields for swift-argument-parser"
        )
        #expect(refusal(PluginOperations.Enable())?.hasPrefix("plugin.enable has no value for its field id:") == true)
        #expect(refusal(ChangeOperations.Show())?.hasPrefix("change.show has no value for its field id:") == true)
        #expect(refusal(FlagOperations.Archive())?.hasPrefix("flag.archive has no value for its field name:") == true)
        #expect(refusal(PluginOperations.List())?.hasPrefix("plugin.list has no value for its field limit:") == true)
        #expect(throws: BoardError.self) { try board.submit(PluginOperations.Yank(), as: admin) }
        // An operation without fields is whole when made empty.
        #expect(refusal(RoleOperations.ListAdmins()) == nil)
    }
}
