import Foundation
import PlugboardFlags
import PlugboardTestSupport
import Testing

@Suite("OpenFeature-style evaluation, provider and batch output", .timeLimit(.hangGuard))
struct ResolutionTests {
    static let json = #"""
        {"version":1,"features":[
          {"name":"everyone","enabled":true,"strategies":[]},
          {"name":"default.strategy","enabled":true,"strategies":[{"name":"default"}]},
          {"name":"killed","enabled":false,"strategies":[{"name":"default"}],"variants":[{"name":"v","weight":1,"payload":{"type":"string","value":"x"}}]},
          {"name":"targeted","enabled":true,"strategies":[{"name":"default","constraints":[{"contextName":"tenant","operator":"IN","values":["acme"]}]}]},
          {"name":"users","enabled":true,"strategies":[{"name":"userWithId","parameters":{"userIds":"u1"}}]},
          {"name":"half","enabled":true,"strategies":[{"name":"flexibleRollout","parameters":{"rollout":"50","stickiness":"userId","groupId":"half"}}]},
          {"name":"full","enabled":true,"strategies":[{"name":"flexibleRollout","parameters":{"rollout":"100","stickiness":"default","groupId":"full"}}]},
          {"name":"child","enabled":true,"dependencies":[{"feature":"killed"}],"strategies":[{"name":"default"}]},
          {"name":"text","enabled":true,"strategies":[{"name":"default"}],
           "variants":[{"name":"only","weight":1,"payload":{"type":"string","value":"hello \"world\"\n"}}]},
          {"name":"split.text","enabled":true,"strategies":[{"name":"default"}],
           "variants":[{"name":"a","weight":1,"stickiness":"userId","payload":{"type":"string","value":"A"},
                        "overrides":[{"contextName":"userId","values":["vip"]}]},
                       {"name":"b","weight":1,"stickiness":"userId","payload":{"type":"csv","value":"b1,b2"}}]},
          {"name":"count","enabled":true,"strategies":[{"name":"default"}],"variants":[{"name":"n","weight":1,"payload":{"type":"number","value":"42"}}]},
          {"name":"ratio","enabled":true,"strategies":[{"name":"default"}],"variants":[{"name":"r","weight":1,"payload":{"type":"number","value":"0.25"}}]},
          {"name":"config","enabled":true,"strategies":[{"name":"default"}],
           "variants":[{"name":"c","weight":1,"payload":{"type":"json","value":"{\"limit\":3,\"tags\":[\"a\"],\"on\":true}"}}]},
          {"name":"broken.json","enabled":true,"strategies":[{"name":"default"}],"variants":[{"name":"j","weight":1,"payload":{"type":"json","value":"{oops"}}]},
          {"name":"no.payload","enabled":true,"strategies":[{"name":"default"}],"variants":[{"name":"bare","weight":1}]}
        ]}
        """#

    static let snapshot: FlagSnapshot = {
        do {
            return try FlagSnapshot(json: Data(json.utf8))
        } catch {
            fatalError("fixture refused: \(error)")
        }
    }()

    @Test("boolean reasons")
    func boolReasons() {
        let s = Self.snapshot
        let ctx = UnleashContext(userId: "u1", properties: ["tenant": "acme"])
        #expect(s.bool("everyone", default: false, context: ctx) == ResolutionDetails(value: true, reason: .static))
        #expect(s.bool("default.strategy", default: false, context: ctx).reason == .static)
        #expect(s.bool("full", default: false, context: ctx).reason == .static)
        #expect(s.bool("killed", default: true, context: ctx) == ResolutionDetails(value: false, reason: .disabled))
        #expect(s.bool("child", default: true, context: ctx) == ResolutionDetails(value: false, reason: .disabled))
        #expect(s.bool("targeted", default: false, context: ctx) == ResolutionDetails(value: true, reason: .targetingMatch))
        #expect(s.bool("targeted", default: true, context: UnleashContext()) == ResolutionDetails(value: false, reason: .default))
        #expect(s.bool("users", default: false, context: ctx).reason == .targetingMatch)
        let half = (0..<50).map { s.bool("half", default: false, context: UnleashContext(userId: "user-\($0)")) }
        #expect(half.contains { $0.value } && half.contains { !$0.value })
        #expect(half.filter(\.value).allSatisfy { $0.reason == .split })
        let missing = s.bool("nope", default: true, context: ctx)
        #expect(
            missing == ResolutionDetails(value: true, reason: .error, errorCode: .flagNotFound, errorMessage: "flag 'nope' does not exist"))
    }

    @Test("typed values from payloads")
    func typedValues() {
        let s = Self.snapshot
        #expect(s.string("text", default: "-") == ResolutionDetails(value: "hello \"world\"\n", variant: "only", reason: .static))
        #expect(
            s.string("split.text", default: "-", context: UnleashContext(userId: "vip"))
                == ResolutionDetails(value: "A", variant: "a", reason: .targetingMatch))
        let split = s.string("split.text", default: "-", context: UnleashContext(userId: "someone"))
        #expect(split.reason == .split && ["A", "b1,b2"].contains(split.value))
        #expect(s.int("count", default: 0) == ResolutionDetails(value: 42, variant: "n", reason: .static))
        #expect(s.double("ratio", default: 0) == ResolutionDetails(value: 0.25, variant: "r", reason: .static))
        #expect(s.double("count", default: 0).value == 42)
        #expect(s.json("config", default: [:]).value == ["limit": .number(3), "tags": .array([.string("a")]), "on": .bool(true)])
    }

    @Test("typed errors fall back to the caller's default")
    func typedErrors() {
        let s = Self.snapshot
        let mismatch = s.int("text", default: 7)
        #expect(mismatch.value == 7 && mismatch.reason == .error && mismatch.errorCode == .typeMismatch && mismatch.variant == "only")
        #expect(s.int("ratio", default: 7).errorCode == .typeMismatch, "0.25 is not an integer")
        #expect(s.json("count", default: ["d": .null]).errorCode == .typeMismatch)
        let parse = s.json("broken.json", default: ["d": .null])
        #expect(parse.value == ["d": .null] && parse.errorCode == .parseError)
        #expect(s.string("no.payload", default: "d") == ResolutionDetails(value: "d", variant: "bare", reason: .default))
        #expect(s.string("everyone", default: "d") == ResolutionDetails(value: "d", reason: .default))
        #expect(s.string("killed", default: "d") == ResolutionDetails(value: "d", reason: .disabled))
        #expect(s.double("nope", default: 1.5).errorCode == .flagNotFound)
    }

    @Test("variant() shapes match Unleash")
    func variants() {
        let s = Self.snapshot
        #expect(s.variant("killed", context: UnleashContext()) == .disabled(featureEnabled: false))
        #expect(s.variant("everyone", context: UnleashContext()) == .disabled(featureEnabled: true))
        #expect(s.variant("nope", context: UnleashContext()) == .disabled(featureEnabled: false))
        #expect(
            s.variant("text", context: UnleashContext())
                == Variant(
                    name: "only", payload: VariantPayload(type: "string", value: "hello \"world\"\n"), enabled: true, featureEnabled: true))
    }

    @Test("the provider swaps snapshots atomically and reports not-ready before the first")
    func provider() async throws {
        let provider = FlagSnapshotProvider()
        #expect(provider.bool("everyone", default: true).errorCode == .providerNotReady)
        #expect(provider.generation == 0)
        try provider.update(json: Data(Self.json.utf8))
        #expect(provider.bool("everyone", default: false).value)
        #expect(provider.generation == 1)
        #expect(throws: FlagsError.self) { try provider.update(json: Data("{]".utf8)) }
        #expect(provider.generation == 1, "a failed update keeps the current snapshot")

        let off = try FlagSnapshot(json: Data(#"{"version":1,"features":[{"name":"everyone","enabled":false}]}"#.utf8))
        let on = Self.snapshot
        // Readers running while a writer flips snapshots always see one whole snapshot.
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for index in 0..<2000 { provider.replace(with: index.isMultiple(of: 2) ? off : on) }
                return true
            }
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<2000 {
                        let snapshot = provider.currentSnapshot
                        let consistent = snapshot.contains("text") == snapshot.isEnabled("everyone", context: UnleashContext())
                        if !consistent { return false }
                    }
                    return true
                }
            }
            for await ok in group { #expect(ok) }
        }
    }

    @Test("batch output format, payload omission, escaping, and line-numbered errors")
    func batch() throws {
        let evaluator = BatchEvaluator(snapshot: Self.snapshot)
        let lines = try evaluator.evaluate(
            jsonl: """
                {"toggle":"text","context":{}}

                {"toggle":"everyone"}
                {"toggle":"nope","context":{"userId":"1"}}
                """)
        #expect(
            lines == [
                #"{"toggle":"text","enabled":true,"variant":{"name":"only","enabled":true,"feature_enabled":true,"payload":{"type":"string","value":"hello \"world\"\n"}}}"#,
                #"{"toggle":"everyone","enabled":true,"variant":{"name":"disabled","enabled":false,"feature_enabled":true}}"#,
                #"{"toggle":"nope","enabled":false,"variant":{"name":"disabled","enabled":false,"feature_enabled":false}}"#,
            ])
        #expect(
            BatchEvaluator.outputLine(toggle: "t\u{1}é/", enabled: false, variant: .disabled(featureEnabled: false))
                == #"{"toggle":"t\u0001é/","enabled":false,"variant":{"name":"disabled","enabled":false,"feature_enabled":false}}"#)
        do {
            _ = try evaluator.evaluate(jsonl: "{\"toggle\":\"text\"}\n{\"context\":{}}\n")
            Issue.record("expected an error")
        } catch {
            #expect(error.lineNumber == 2)
            #expect(error.description == "line 2: missing required key 'toggle'")
        }
        #expect(throws: FlagsError.self) { try evaluator.evaluate(line: "[1,2]", lineNumber: 9) }
        #expect(throws: FlagsError.self) { try evaluator.evaluate(line: #"{"toggle":"a","context":{"userId":["x"]}}"#, lineNumber: 1) }
        #expect(throws: FlagsError.self) { try BatchEvaluator.evaluate(features: Data("{".utf8), contexts: "") }
    }
}
