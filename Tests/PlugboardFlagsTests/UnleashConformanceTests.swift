import Foundation
import PlugboardFlags
import PlugboardTestSupport
import Testing

/// Locates and runs the Unleash client specification fixtures.
enum Conformance {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/unleash-client-specification/specifications")

    /// Delta-API files: their state is a list of delta events (what `GET /api/client/delta`, which `plugboard serve`
    /// serves, sends), applied in order as an SDK applies them to its cache before the cases are evaluated.
    static let deltaFiles: Set<String> = ["19-delta-api-hydration.json", "20-delta-api-events.json"]

    /// A delta file's events applied in order to an empty cache, as a client-API state: `hydration` replaces everything,
    /// `feature-updated` / `feature-removed` and `segment-updated` / `segment-removed` change one entry.
    static func applyingDeltaEvents(_ data: Data) throws -> Data {
        guard var spec = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let state = spec["state"] as? [String: Any], let events = state["events"] as? [[String: Any]]
        else { throw DeltaFileError(reason: "no state.events") }
        var features: [[String: Any]] = []
        var segments: [[String: Any]] = []
        for event in events {
            switch event["type"] as? String {
            case "hydration":
                features = event["features"] as? [[String: Any]] ?? []
                segments = event["segments"] as? [[String: Any]] ?? []
            case "feature-updated":
                guard let feature = event["feature"] as? [String: Any], let name = feature["name"] as? String else { continue }
                features.removeAll { $0["name"] as? String == name }
                features.append(feature)
            case "feature-removed":
                features.removeAll { $0["name"] as? String == event["featureName"] as? String }
            case "segment-updated":
                guard let segment = event["segment"] as? [String: Any], let id = segment["id"] as? Int else { continue }
                segments.removeAll { $0["id"] as? Int == id }
                segments.append(segment)
            case "segment-removed":
                segments.removeAll { $0["id"] as? Int == event["segmentId"] as? Int }
            case let other:
                throw DeltaFileError(reason: "unknown delta event type \(other ?? "(none)")")
            }
        }
        spec["state"] = ["version": 2, "features": features, "segments": segments]
        return try JSONSerialization.data(withJSONObject: spec)
    }

    struct DeltaFileError: Error { let reason: String }

    /// Every file listed in `index.json`.
    static var indexedFiles: [String] {
        guard let data = try? Data(contentsOf: folder.appendingPathComponent("index.json")),
            let names = try? JSONDecoder().decode([String].self, from: data)
        else { return [] }
        return names
    }

    struct SpecFile: Decodable {
        struct TestCase: Decodable {
            let description: String
            let context: UnleashContext
            let toggleName: String
            let expectedResult: Bool
        }

        struct VariantTestCase: Decodable {
            let description: String
            let context: UnleashContext
            let toggleName: String
            let expectedResult: Variant
        }

        let name: String
        let state: FeatureSet
        let tests: [TestCase]?
        let variantTests: [VariantTestCase]?
    }

    struct Result {
        var cases = 0
        var passed = 0
        var failures: [String] = []
    }

    /// Runs every case of one file; the snapshot is lenient, since the fixtures deliberately contain
    /// definitions strict validation refuses (an unknown operator, an invalid regex, invalid CIDRs, a cycle).
    static func run(_ file: String) throws -> Result {
        var data = try Data(contentsOf: folder.appendingPathComponent(file))
        if deltaFiles.contains(file) { data = try applyingDeltaEvents(data) }
        let spec = try JSONDecoder().decode(SpecFile.self, from: data)
        let snapshot = try FlagSnapshot(spec.state, mode: .lenient)
        var result = Result()
        result.cases = (spec.tests?.count ?? 0) + (spec.variantTests?.count ?? 0)
        for test in spec.tests ?? [] {
            let actual = snapshot.isEnabled(test.toggleName, context: test.context)
            if actual == test.expectedResult {
                result.passed += 1
            } else {
                result.failures.append("\(file): \(test.description) — expected \(test.expectedResult), got \(actual)")
            }
        }
        for test in spec.variantTests ?? [] {
            let actual = snapshot.variant(test.toggleName, context: test.context)
            if actual == test.expectedResult {
                result.passed += 1
            } else {
                result.failures.append("\(file): \(test.description) — expected \(test.expectedResult), got \(actual)")
            }
        }
        return result
    }
}

@Suite("Unleash client specification", .timeLimit(.hangGuard))
struct UnleashConformanceTests {
    @Test("index.json lists the fixture files")
    func indexIsReadable() {
        #expect(Conformance.indexedFiles.count >= 20, "fixtures not found at \(Conformance.folder.path)")
    }

    @Test("specification file", arguments: Conformance.indexedFiles)
    func specificationFile(_ file: String) throws {
        let result = try Conformance.run(file)
        for failure in result.failures { Issue.record(Comment(rawValue: failure)) }
        #expect(result.passed > 0, "\(file) has no cases")
    }

    @Test("all specification files together")
    func total() throws {
        var cases = 0
        var passed = 0
        var failed = 0
        for file in Conformance.indexedFiles {
            let result = try Conformance.run(file)
            cases += result.cases
            passed += result.passed
            failed += result.failures.count
        }
        #expect(failed == 0)
        #expect(passed == cases)
        #expect(cases > 250, "expected the full suite, found \(cases) cases")
        print(
            "Unleash conformance: \(passed) cases passed, \(failed) failed, in \(Conformance.indexedFiles.count) files (the delta-API files' events applied as an SDK applies them)"
        )
    }
}
