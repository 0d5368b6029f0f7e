import Foundation
import PlugboardFlags
import Testing

/// Locates and runs the Unleash client specification fixtures.
enum Conformance {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/unleash-client-specification/specifications")

    /// Delta-sync files: Plugboard does not implement Unleash's delta API.
    static let deltaFiles: Set<String> = ["19-delta-api-hydration.json", "20-delta-api-events.json"]

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
        let data = try Data(contentsOf: folder.appendingPathComponent(file))
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

@Suite("Unleash client specification")
struct UnleashConformanceTests {
    @Test("index.json lists the fixture files")
    func indexIsReadable() {
        #expect(Conformance.indexedFiles.count >= 20, "fixtures not found at \(Conformance.folder.path)")
    }

    @Test("specification file", arguments: Conformance.indexedFiles)
    func specificationFile(_ file: String) throws {
        if Conformance.deltaFiles.contains(file) {
            print("Unleash conformance: skipping \(file) — it tests the delta sync API, which Plugboard does not implement")
            return
        }
        let result = try Conformance.run(file)
        for failure in result.failures { Issue.record(Comment(rawValue: failure)) }
        #expect(result.passed > 0, "\(file) has no cases")
    }

    @Test("all specification files together")
    func total() throws {
        var cases = 0
        var passed = 0
        var failed = 0
        var skipped: [String] = []
        for file in Conformance.indexedFiles {
            if Conformance.deltaFiles.contains(file) {
                skipped.append(file)
                continue
            }
            let result = try Conformance.run(file)
            cases += result.cases
            passed += result.passed
            failed += result.failures.count
        }
        #expect(failed == 0)
        #expect(passed == cases)
        #expect(cases > 250, "expected the full suite, found \(cases) cases")
        print(
            "Unleash conformance: \(passed) cases passed, \(failed) failed (skipped \(skipped.joined(separator: ", ")): delta sync API not implemented)"
        )
    }
}
