import Foundation
import PlugboardTestSupport
import Testing

@testable import PlugboardVersioning

@Suite(.timeLimit(.hangGuard)) struct SemanticVersionTests {
    /// SemVer 2.0.0 §11, example 4, and the core example of §11.2, plus numeric and ASCII edge cases.
    static let ascending: [[String]] = [
        ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"],
        ["1.0.0", "2.0.0", "2.1.0", "2.1.1"],
        // Numeric identifiers compare as numbers, even past UInt64; digits sort below letters, letters by ASCII.
        ["1.0.0-2", "1.0.0-10", "1.0.0-99999999999999999999", "1.0.0-100000000000000000000", "1.0.0-A", "1.0.0-a"],
        ["0.0.0-0", "0.0.0", "0.0.1", "0.1.0", "1.0.0", "18446744073709551615.0.0"],
    ]

    @Test(arguments: ascending)
    func precedenceFollowsTheSpecification(_ chain: [String]) throws {
        let versions = try chain.map { try SemanticVersion($0) }
        for (index, lower) in versions.enumerated() {
            for higher in versions[(index + 1)...] {
                #expect(lower < higher, "\(lower) < \(higher)")
                #expect(!(higher < lower), "!(\(higher) < \(lower))")
                #expect(lower != higher)
            }
            #expect(!(lower < lower))
        }
        #expect(versions.reversed().sorted() == versions)
    }

    @Test func buildMetadataIsIgnoredForPrecedenceAndEquality() throws {
        let plain = try SemanticVersion("1.0.0-beta")
        let built = try SemanticVersion("1.0.0-beta+exp.sha.5114f85")
        let other = try SemanticVersion("1.0.0-beta+20130313144700")
        #expect(plain == built)
        #expect(built == other)
        #expect(!(built < other) && !(other < built))
        #expect(Set([plain, built, other]).count == 1)
        #expect(built.build == ["exp", "sha", "5114f85"])
        #expect(built.description == "1.0.0-beta+exp.sha.5114f85")
    }

    @Test(
        arguments: [
            ("1.0.0-0.3.7", 1, 0, 0, ["0", "3", "7"], [String]()),
            ("1.0.0-x.7.z.92", 1, 0, 0, ["x", "7", "z", "92"], []),
            ("1.0.0-x-y-z.--", 1, 0, 0, ["x-y-z", "--"], []),
            ("1.0.0-alpha+001", 1, 0, 0, ["alpha"], ["001"]),
            ("1.0.0+20130313144700", 1, 0, 0, [], ["20130313144700"]),
            ("1.0.0-beta+exp.sha.5114f85", 1, 0, 0, ["beta"], ["exp", "sha", "5114f85"]),
            ("1.0.0+21AF26D3----117B344092BD", 1, 0, 0, [], ["21AF26D3----117B344092BD"]),
            ("0.0.0", 0, 0, 0, [], []),
            ("10.20.30", 10, 20, 30, [], []),
            ("18446744073709551615.0.1", 18_446_744_073_709_551_615, 0, 1, [], []),
        ] as [(String, UInt64, UInt64, UInt64, [String], [String])])
    func parsesValidVersions(
        _ text: String, _ major: UInt64, _ minor: UInt64, _ patch: UInt64, _ prerelease: [String], _ build: [String]
    ) throws {
        let version = try SemanticVersion(text)
        #expect(version.major == major)
        #expect(version.minor == minor)
        #expect(version.patch == patch)
        #expect(version.prerelease == prerelease)
        #expect(version.build == build)
        #expect(version.isPrerelease == !prerelease.isEmpty)
        #expect(version.description == text)
        #expect(version.release.description == "\(major).\(minor).\(patch)")
    }

    @Test(arguments: [
        ("01.2.3", "the major component '01' has a leading zero"),
        ("1.02.3", "the minor component '02' has a leading zero"),
        ("1.2.03", "the patch component '03' has a leading zero"),
        ("1.2", "expected MAJOR.MINOR.PATCH"),
        ("1.2.3.4", "expected MAJOR.MINOR.PATCH"),
        ("", "expected MAJOR.MINOR.PATCH"),
        ("1.-2.3", "expected MAJOR.MINOR.PATCH"),
        ("1.2.3-01", "the numeric pre-release identifier '01' has a leading zero"),
        ("1.2.3-", "a pre-release identifier is empty"),
        ("1.2.3-a..b", "a pre-release identifier is empty"),
        ("1.2.3+", "build metadata after '+' is empty"),
        ("1.2.3+a..b", "a build-metadata identifier is empty"),
        ("1.2.3+a+b", "the build identifier 'a+b' may contain only [0-9A-Za-z-]"),
        ("v1.2.3", "the major component 'v1' is not a number"),
        (" 1.2.3", "the major component ' 1' is not a number"),
        ("1.2.3 ", "the patch component '3 ' is not a number"),
        ("1.2.3-ä", "the pre-release identifier 'ä' may contain only [0-9A-Za-z-]"),
        ("1.2.٣", "the patch component '٣' is not a number"),
        ("18446744073709551616.0.0", "the major component '18446744073709551616' is too large"),
        ("1.99999999999999999999.0", "the minor component '99999999999999999999' is too large"),
    ])
    func rejectsInvalidVersions(_ text: String, _ problem: String) {
        #expect(SemanticVersion(parsing: text) == nil)
        let error = #expect(throws: VersionError.self) { try SemanticVersion(text) }
        #expect(error?.message.hasPrefix("'\(text)' is not a valid version: ") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(problem) == true, "\(error?.message ?? "") should mention \(problem)")
    }

    @Test func memberwiseInitializerValidatesAndNamesTheWholeVersion() throws {
        let version = try SemanticVersion(major: 1, minor: 2, patch: 3, prerelease: ["rc", "1"], build: ["b7"])
        #expect(version.description == "1.2.3-rc.1+b7")
        let error = #expect(throws: VersionError.self) {
            try SemanticVersion(major: 1, minor: 2, patch: 3, prerelease: ["rc", "01"])
        }
        #expect(error?.message == "'1.2.3-rc.01' is not a valid version: the numeric pre-release identifier '01' has a leading zero")
        #expect(throws: VersionError.self) { try SemanticVersion(major: 1, minor: 2, patch: 3, build: ["a_b"]) }
    }

    @Test func codableAsItsString() throws {
        let versions = try ["1.2.3", "1.0.0-rc.1+build.5"].map { try SemanticVersion($0) }
        let data = try JSONEncoder().encode(versions)
        #expect(String(decoding: data, as: UTF8.self) == #"["1.2.3","1.0.0-rc.1+build.5"]"#)
        let decoded = try JSONDecoder().decode([SemanticVersion].self, from: data)
        #expect(decoded == versions)
        #expect(decoded.map(\.build) == [[], ["build", "5"]])
        #expect(throws: (any Error).self) { try JSONDecoder().decode([SemanticVersion].self, from: Data(#"["1.2"]"#.utf8)) }
    }
}
