import Foundation
import PlugboardFlags
import PlugboardTestSupport
import Testing

@Suite("The module's one error: its code, its message and what it carries", .timeLimit(.hangGuard))
struct FlagsErrorTests {
    /// One error (a rollout of 150 %) and one warning (a dependency on a flag that does not exist).
    static let refused = """
        {"version":1,"features":[
        {"name":"a","enabled":true,"strategies":[{"name":"flexibleRollout","parameters":{"rollout":"150"}}]},
        {"name":"b","enabled":true,"dependencies":[{"feature":"ghost"}]}]}
        """

    @Test("malformed features JSON: malformedFeatures, the message names the flag and the field")
    func malformedFeatures() {
        let error = #expect(throws: FlagsError.self) {
            try FeatureSet.decode(from: #"{"version":1,"features":[{"name":"f","enabled":"yes"}]}"#)
        }
        #expect(error?.code == .malformedFeatures)
        #expect(error?.description.hasPrefix("flag 'f' (features[0]) enabled: expected a boolean") == true)
        #expect(error?.lineNumber == nil && error?.validation == nil)
        let fromJSON = #expect(throws: FlagsError.self) { try FlagSnapshot(json: Data("{]".utf8)) }
        #expect(fromJSON?.code == .malformedFeatures)
    }

    @Test("a set strict validation refuses: invalidFeatures, one error a line, the report with errors and warnings")
    func invalidFeatures() throws {
        let set = try FeatureSet.decode(from: Self.refused)
        do {
            _ = try FlagSnapshot(set)
            Issue.record("expected a refusal")
        } catch {
            #expect(error.code == .invalidFeatures)
            #expect(error.message == "flag 'a' strategy 1 parameter 'rollout': '150' is above 100")
            #expect(error.description == error.message)
            #expect(error.validation == set.validate())
            #expect(error.validation?.warnings.count == 1)
        }
        #expect(throws: Never.self) { try FlagSnapshot(set, mode: .lenient) }
    }

    @Test("a malformed batch line: malformedRequest with its line number; the one-shot batch names the features")
    func malformedRequest() throws {
        let evaluator = try BatchEvaluator(features: Data(#"{"version":1,"features":[]}"#.utf8))
        do {
            _ = try evaluator.evaluate(line: "[1,2]", lineNumber: 9)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .malformedRequest)
            #expect(error.lineNumber == 9)
            #expect(error.message == #"expected a JSON object like {"toggle": "NAME", "context": {…}}"#)
            #expect(error.description == "line 9: \(error.message)")
        }
        do {
            _ = try BatchEvaluator.evaluate(features: Data(Self.refused.utf8), contexts: "")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidFeatures)
            #expect(error.description == "features: flag 'a' strategy 1 parameter 'rollout': '150' is above 100")
        }
    }

    @Test("codes are an open set compared by name")
    func openCodes() {
        #expect(FlagsError.Code(rawValue: "malformed-request") == .malformedRequest)
        #expect(FlagsError.Code(rawValue: "something-new") != .malformedFeatures)
        #expect("\(FlagsError.Code.invalidFeatures)" == "invalid-features")
    }
}
