import Foundation
import PlugboardFlags
import PlugboardTestSupport
import Testing

@Suite("Decoding, validation and round-trips", .timeLimit(.hangGuard))
struct ValidationTests {
    func errors(_ json: String) throws -> [String] {
        try FeatureSet.decode(from: json).validate().errors.map(\.description)
    }

    @Test("bad JSON and wrong shapes name the flag and the field")
    func decodingErrors() {
        #expect(throws: FlagsError.self) { try FeatureSet.decode(from: "{not json") }
        do {
            _ = try FeatureSet.decode(
                from:
                    #"{"version":1,"features":[{"name":"ok","enabled":true},{"name":"checkout","enabled":true,"strategies":[{"name":"default","constraints":[{"contextName":"x","values":["a"]}]}]}]}"#
            )
            Issue.record("expected a decoding error")
        } catch {
            #expect(error.message == "flag 'checkout' (features[1]) strategy 1 constraint 1: missing required key 'operator'")
        }
        do {
            _ = try FeatureSet.decode(from: #"{"version":1,"features":[{"name":"f","enabled":"yes"}]}"#)
            Issue.record("expected a decoding error")
        } catch {
            #expect(error.message.hasPrefix("flag 'f' (features[0]) enabled: expected a boolean"), "\(error.message)")
        }
    }

    @Test("every refused definition names the flag and the field")
    func validationErrors() throws {
        let json = #"""
            {"version":1,"features":[
              {"name":"checkout","enabled":true,"strategies":[
                {"name":"default"},
                {"name":"default","constraints":[{"contextName":"email","operator":"REGEX_MATCHES","value":"x"}]}]},
              {"name":"bad.values","enabled":true,"strategies":[{"name":"default","constraints":[
                {"contextName":"s","operator":"REGEX","value":"(open"},
                {"contextName":"ip","operator":"IN_CIDR","values":["10.0.0.0/8","300.1.1.1"]},
                {"contextName":"v","operator":"SEMVER_GT","value":"1.2"},
                {"contextName":"n","operator":"NUM_LT","value":"12,5"},
                {"contextName":"currentTime","operator":"DATE_AFTER","value":"2024-13-01T00:00:00Z"},
                {"contextName":"e","operator":"STR_CONTAINS","values":[]},
                {"contextName":"s","operator":"REGEX","values":["^[0-9]+$"]}]}]},
              {"name":"rollout","enabled":true,"strategies":[{"name":"flexibleRollout","parameters":{"rollout":"150"},"segments":[9]}],
               "variants":[{"name":"a","weight":0},{"name":"b","weight":0}]},
              {"name":"a","enabled":true,"dependencies":[{"feature":"b"}]},
              {"name":"b","enabled":true,"dependencies":[{"feature":"a"}]}
            ]}
            """#
        let found = try errors(json)
        let expected = [
            "flag 'checkout' strategy 2 constraint 1 operator: 'REGEX_MATCHES' is not a known operator",
            "flag 'bad.values' strategy 1 constraint 1 value: '(open' is not a valid regular expression",
            "flag 'bad.values' strategy 1 constraint 2 values: '300.1.1.1' is not an IP address or CIDR range",
            "flag 'bad.values' strategy 1 constraint 3 value: '1.2' is not a semantic version",
            "flag 'bad.values' strategy 1 constraint 4 value: '12,5' is not a number",
            "flag 'bad.values' strategy 1 constraint 5 value: '2024-13-01T00:00:00Z' is not a date-time like 2024-05-01T12:00:00.000Z",
            "flag 'bad.values' strategy 1 constraint 6 values: STR_CONTAINS needs at least one value",
            "flag 'bad.values' strategy 1 constraint 7 value: REGEX needs a regular expression in 'value' ('values' is not read for REGEX)",
            "flag 'rollout' strategy 1 parameter 'rollout': '150' is above 100",
            "flag 'rollout' strategy 1 segment 1: segment id 9 does not exist",
            "flag 'rollout' variants: the variant weights add up to 0, so no variant can be picked",
            "flag 'b' dependencies: dependency cycle 'a' → 'b' → 'a'",
        ]
        for message in expected {
            #expect(found.contains { $0.hasPrefix(message) }, "missing: \(message)\nfound:\n\(found.joined(separator: "\n"))")
        }
        #expect(found.count == expected.count, "\(found.joined(separator: "\n"))")
        #expect(throws: FlagsError.self) { try FlagSnapshot(FeatureSet.decode(from: json)) }
    }

    @Test("a dependency on a missing flag is accepted with a warning and keeps the child off")
    func missingParent() throws {
        let set = try FeatureSet.decode(
            from: #"{"version":1,"features":[{"name":"child","enabled":true,"dependencies":[{"feature":"ghost"}]}]}"#)
        let report = set.validate()
        #expect(report.isValid)
        #expect(
            report.warnings.map(\.description) == ["flag 'child' dependency 1: flag 'ghost' does not exist, so this flag is always off"])
        let snapshot = try FlagSnapshot(set)
        #expect(!snapshot.isEnabled("child", context: UnleashContext()))
        #expect(snapshot.warnings.count == 1)
    }

    @Test("segment problems name the segment and the flags using it")
    func segmentErrors() throws {
        let json = #"""
            {"version":1,"features":[{"name":"f","enabled":true,"strategies":[{"name":"default","segments":[3]}]}],
             "segments":[{"id":3,"constraints":[{"contextName":"age","operator":"NUM_GT","value":"old"}]}]}
            """#
        #expect(try errors(json) == ["segment 3 (used by flag 'f') constraint 1 value: 'old' is not a number"])
        // Leniently, the flag is off, as Unleash's engine cannot compile it.
        let lenient = try FlagSnapshot(FeatureSet.decode(from: json), mode: .lenient)
        #expect(!lenient.isEnabled("f", context: UnleashContext(properties: ["age": "3"])))
        #expect(!lenient.warnings.isEmpty)
    }

    @Test("export re-imports to the same flags")
    func roundTrip() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/differential/features.json")
        let original = try FeatureSet.decode(from: Data(contentsOf: url))
        let exported = original.encoded()
        let reimported = try FeatureSet.decode(from: exported)
        #expect(reimported == original)
        #expect(reimported.encoded() == exported, "encoding is deterministic")
        // Every conformance fixture round-trips too.
        for file in Conformance.indexedFiles where !Conformance.deltaFiles.contains(file) {
            let data = try Data(contentsOf: Conformance.folder.appendingPathComponent(file))
            let state = try JSONDecoder().decode(Conformance.SpecFile.self, from: data).state
            #expect(try FeatureSet.decode(from: state.encoded(prettyPrinted: true)) == state, "\(file)")
        }
    }

    @Test("numbers in parameters and payload values are kept as text")
    func lenientScalars() throws {
        let set = try FeatureSet.decode(
            from: #"""
                {"version":1,"features":[{"name":"f","enabled":true,
                  "strategies":[{"name":"flexibleRollout","parameters":{"rollout":50,"stickiness":"default"}}],
                  "variants":[{"name":"v","weight":1,"payload":{"type":"number","value":1.5}}]}]}
                """#)
        #expect(set.features[0].strategies?[0].parameters?["rollout"] == "50")
        #expect(set.features[0].variants?[0].payload?.value == "1.5")
    }
}
