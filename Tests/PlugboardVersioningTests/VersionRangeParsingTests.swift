import Foundation
import PlugboardTestSupport
import Testing

@testable import PlugboardVersioning

@Suite(.timeLimit(.hangGuard)) struct VersionRangeParsingTests {
    /// Adapted from node-semver's `test/fixtures/range-parse.js` (sets joined by ` || ` here), plus the forms of
    /// the grammar that fixture does not cover.
    static let normalizations: [(String, String)] = [
        ("1.0.0 - 2.0.0", ">=1.0.0 <=2.0.0"),
        ("1 - 2", ">=1.0.0 <3.0.0-0"),
        ("1.0 - 2.0", ">=1.0.0 <2.1.0-0"),
        ("1.2 - 3.4.5", ">=1.2.0 <=3.4.5"),
        ("1.2.3 - 3.4", ">=1.2.3 <3.5.0-0"),
        ("1.2 - 3.4", ">=1.2.0 <3.5.0-0"),
        ("x - 1.0.0", "<=1.0.0"),
        ("1.x - x", ">=1.0.0"),
        ("x - x", "*"),
        ("0.0.0 - 1.0.0", "<=1.0.0"),
        ("1.2.3-pre+asdf - 2.4.3-pre+asdf", ">=1.2.3-pre <=2.4.3-pre"),
        ("1.0.0", "1.0.0"),
        ("=1.0.0", "1.0.0"),
        ("1.2.3+build.5", "1.2.3"),
        (">=*", "*"),
        ("*", "*"),
        ("x", "*"),
        ("=*", "*"),
        (">=0.0.0", "*"),
        (">=0.0.0-0", ">=0.0.0-0"),
        (">=1.0.0", ">=1.0.0"),
        (">1.0.0", ">1.0.0"),
        ("<=2.0.0", "<=2.0.0"),
        ("<2.0.0", "<2.0.0"),
        (">= 1.0.0", ">=1.0.0"),
        (">=   1.0.0", ">=1.0.0"),
        ("> 1.0.0", ">1.0.0"),
        ("<\t2.0.0", "<2.0.0"),
        ("0.1.20 || 1.2.4", "0.1.20 || 1.2.4"),
        (">=0.2.3 || <0.0.1", ">=0.2.3 || <0.0.1"),
        ("2.x.x", ">=2.0.0 <3.0.0-0"),
        ("1.2.x", ">=1.2.0 <1.3.0-0"),
        ("1.2.x || 2.x", ">=1.2.0 <1.3.0-0 || >=2.0.0 <3.0.0-0"),
        ("2.*.*", ">=2.0.0 <3.0.0-0"),
        ("1.2.*", ">=1.2.0 <1.3.0-0"),
        ("1.*", ">=1.0.0 <2.0.0-0"),
        ("2", ">=2.0.0 <3.0.0-0"),
        ("2.3", ">=2.3.0 <2.4.0-0"),
        ("~2.4", ">=2.4.0 <2.5.0-0"),
        ("~>3.2.1", ">=3.2.1 <3.3.0-0"),
        ("~1", ">=1.0.0 <2.0.0-0"),
        ("~>1", ">=1.0.0 <2.0.0-0"),
        ("~> 1", ">=1.0.0 <2.0.0-0"),
        ("~1.0", ">=1.0.0 <1.1.0-0"),
        ("~ 1.0", ">=1.0.0 <1.1.0-0"),
        ("~1.2.3", ">=1.2.3 <1.3.0-0"),
        ("~1.2.3-beta", ">=1.2.3-beta <1.3.0-0"),
        ("~0", "<1.0.0-0"),
        ("~x", "*"),
        ("^0", "<1.0.0-0"),
        ("^ 1", ">=1.0.0 <2.0.0-0"),
        ("^0.0", "<0.1.0-0"),
        ("^0.1", ">=0.1.0 <0.2.0-0"),
        ("^1.0", ">=1.0.0 <2.0.0-0"),
        ("^1.2", ">=1.2.0 <2.0.0-0"),
        ("^1.2.x", ">=1.2.0 <2.0.0-0"),
        ("^0.0.1", ">=0.0.1 <0.0.2-0"),
        ("^0.0.3", ">=0.0.3 <0.0.4-0"),
        ("^0.0.1-beta", ">=0.0.1-beta <0.0.2-0"),
        ("^0.1.2", ">=0.1.2 <0.2.0-0"),
        ("^0.2.3", ">=0.2.3 <0.3.0-0"),
        ("^1.2.3", ">=1.2.3 <2.0.0-0"),
        ("^1.2.3-beta.4", ">=1.2.3-beta.4 <2.0.0-0"),
        ("^x", "*"),
        ("<1", "<1.0.0-0"),
        ("< 1", "<1.0.0-0"),
        (">=1", ">=1.0.0"),
        (">= 1", ">=1.0.0"),
        ("<1.2", "<1.2.0-0"),
        ("< 1.2", "<1.2.0-0"),
        ("<=1.2", "<1.3.0-0"),
        ("<=7.x", "<8.0.0-0"),
        ("=0.7.x", ">=0.7.0 <0.8.0-0"),
        ("^ 1.2 ^ 1", ">=1.2.0 <2.0.0-0 >=1.0.0"),
        ("^1.2 || ^2.0", ">=1.2.0 <2.0.0-0 || >=2.0.0 <3.0.0-0"),
        (">=1.2.0 <2.0.0", ">=1.2.0 <2.0.0"),
        (">=1.2.3 >=1.2.3 <2", ">=1.2.3 <2.0.0-0"),
        (">1", ">=2.0.0"),
        (">1.2", ">=1.3.0"),
        (">X", "<0.0.0-0"),
        ("<X", "<0.0.0-0"),
        ("<x <* || >* 2.x", "<0.0.0-0"),
        (">x 2.x || * || <x", "*"),
        ("1.x || >x", ">=1.0.0 <2.0.0-0"),
        ("* || >=1.2.3-alpha", "* || >=1.2.3-alpha"),
        ("^1 || * || ^2", "*"),
        (">2.0.0 <1.0.0", ">2.0.0 <1.0.0"),
        ("  ^1.2\t", ">=1.2.0 <2.0.0-0"),
        ("^18446744073709551615.1", ">=18446744073709551615.1.0"),
        ("~18446744073709551615.18446744073709551615.3", ">=18446744073709551615.18446744073709551615.3"),
        ("^0.18446744073709551615", ">=0.18446744073709551615.0 <1.0.0-0"),
        (">18446744073709551615", "<0.0.0-0"),
        ("<=18446744073709551615.x", "*"),
    ]

    @Test(arguments: normalizations)
    func normalizes(_ text: String, _ normalized: String) throws {
        let range = try VersionRange(text)
        #expect(range.normalized == normalized)
        // The normalized form is itself a range that normalizes to itself.
        #expect(try VersionRange(normalized).normalized == normalized)
    }

    /// node-semver's `{ includePrerelease: true }` desugaring.
    @Test(arguments: [
        ("1.0.0 - 2.0.0", ">=1.0.0-0 <2.0.1-0"),
        ("1 - 2", ">=1.0.0-0 <3.0.0-0"),
        ("1.0 - 2.0", ">=1.0.0-0 <2.1.0-0"),
        ("1.2.3-rc.1 - 2.0.0-rc.1", ">=1.2.3-rc.1 <=2.0.0-rc.1"),
        ("1.x", ">=1.0.0-0 <2.0.0-0"),
        ("1.2", ">=1.2.0-0 <1.3.0-0"),
        (">=1.2", ">=1.2.0-0"),
        (">1.2", ">=1.3.0-0"),
        ("<1.2", "<1.2.0-0"),
        ("^1", ">=1.0.0-0 <2.0.0-0"),
        ("^1.2", ">=1.2.0-0 <2.0.0-0"),
        ("^1.2.3", ">=1.2.3 <2.0.0-0"),
        ("^0.1.2", ">=0.1.2-0 <0.2.0-0"),
        ("^0.0.1", ">=0.0.1-0 <0.0.2-0"),
        ("^0", "<1.0.0-0"),
        ("~1.2", ">=1.2.0 <1.3.0-0"),
        (">=0.0.0", ">=0.0.0"),
        (">=1.2.3", ">=1.2.3"),
        ("* || >=1.2.3-alpha", "*"),
    ])
    func normalizesForIncludePrerelease(_ text: String, _ normalized: String) throws {
        #expect(try VersionRange(text).normalized(includePrerelease: true) == normalized)
    }

    /// The normalized text matches the same versions as the range it came from, by the pre-release rule.
    @Test func normalizedFormMatchesTheSameVersions() throws {
        let versions = try [
            "0.0.0", "0.0.1", "0.0.2-alpha", "0.1.0", "0.1.2", "0.2.0", "1.0.0-0", "1.0.0", "1.2.0-pre", "1.2.3-alpha",
            "1.2.3-beta", "1.2.3", "1.2.4", "1.3.0", "2.0.0-rc.1", "2.0.0", "2.3.4", "3.4.5", "3.5.0",
        ].map { try SemanticVersion($0) }
        for (text, normalized) in Self.normalizations {
            let original = try VersionRange(text)
            let reparsed = try VersionRange(normalized)
            for version in versions {
                #expect(original.contains(version) == reparsed.contains(version), "\(text) vs \(normalized) on \(version)")
            }
        }
    }

    @Test(arguments: [
        ("", "it is empty"),
        ("   ", "it is empty"),
        ("garbage", "'garbage' is not a version: 'garbage' is not a number, 'x' or '*'"),
        ("latest", "'latest' is not a version"),
        ("1.2.3 | 2.0.0", "'|' is not a version"),
        (">=", "'>=' is not followed by a version"),
        ("^", "'^' is not followed by a version"),
        ("~> ", "'~>' is not followed by a version"),
        (">=1.0.0 <", "'<' is not followed by a version"),
        (">= >=1.0.0", "'>=' is not followed by a version"),
        ("||", "'||' must have a comparator set on each side"),
        ("|| 1.0.0", "'||' must have a comparator set on each side"),
        ("1.0.0 ||", "'||' must have a comparator set on each side"),
        ("1.0.0 || || 2.0.0", "'||' must have a comparator set on each side"),
        ("1.0.0 |||| 2.0.0", "'||' must have a comparator set on each side"),
        ("01.2.3", "'01.2.3' has a leading zero in '01'"),
        (">=1.02", "'1.02' has a leading zero in '02'"),
        ("^1.2.03", "'1.2.03' has a leading zero in '03'"),
        (">=1.2.x.4", "'1.2.x.4' has more than three components"),
        ("1.2.3.4", "'1.2.3.4' has more than three components"),
        ("1.x.3", "'1.x.3' has a number after a wildcard"),
        ("*.2", "'*.2' has a number after a wildcard"),
        ("1..2", "'1..2' has an empty component"),
        ("1.", "'1.' has an empty component"),
        ("1.2.x-beta", "'1.2.x-beta' has a pre-release or build suffix, which needs a full MAJOR.MINOR.PATCH version"),
        ("^1.2-beta", "'1.2-beta' has a pre-release or build suffix"),
        ("1+build", "'1+build' has a pre-release or build suffix"),
        ("-1.2.3", "'-1.2.3' is not a version"),
        ("1.2.3-", "in '1.2.3-', a pre-release identifier is empty"),
        ("1.2.3-a..b", "in '1.2.3-a..b', a pre-release identifier is empty"),
        (">1.2.3-01", "in '1.2.3-01', the numeric pre-release identifier '01' has a leading zero"),
        ("1.2.3-ä", "in '1.2.3-ä', the pre-release identifier 'ä' may contain only [0-9A-Za-z-]"),
        ("1.2.3+", "in '1.2.3+', a build-metadata identifier is empty"),
        ("1.2.3+a_b", "in '1.2.3+a_b', the build identifier 'a_b' may contain only [0-9A-Za-z-]"),
        ("v1.2.3", "'v1.2.3' starts with 'v'; write the version without it"),
        ("=v1.2.3", "'v1.2.3' starts with 'v'"),
        ("=>1.2.3", "'=>' is not an operator (use <, <=, >, >=, =, ~, ~> or ^)"),
        (">>1", "'>>' is not an operator"),
        ("~^1", "'~^' is not an operator"),
        ("1.2.3 -", "a hyphen range is 'A - B' alone, with one version on each side, but '1.2.3 -' is not"),
        ("- 1.2.3", "a hyphen range is 'A - B' alone"),
        ("1.2.3 - 2.0.0 - 3.0.0", "a hyphen range is 'A - B' alone"),
        ("1.2.3 - 2.0.0 >=1.5.0", "a hyphen range is 'A - B' alone"),
        (">=1.2.3 - 2.0.0", "the ends of a hyphen range are plain versions, but '>=1.2.3' has an operator"),
        ("1.2.3 - ^2", "the ends of a hyphen range are plain versions, but '^2' has an operator"),
        ("18446744073709551616", "'18446744073709551616' has a component too large for a 64-bit number"),
        ("1.2.3\u{A0}", "'1.2.3\u{A0}' is not a version"),
        ("1.2.3,2.0.0", "'1.2.3,2.0.0' has more than three components"),
    ])
    func rejects(_ text: String, _ problem: String) {
        #expect(VersionRange(parsing: text) == nil)
        let error = #expect(throws: VersionError.self) { try VersionRange(text) }
        let message = error?.message ?? ""
        #expect(message.hasPrefix("'\(text)' is not a valid version range: "), "\(message)")
        #expect(message.contains(problem), "\(message) should mention \(problem)")
        #expect(!message.contains("\n"))
    }

    @Test func errorMessageIsOneSentenceNamingTheRange() {
        let error = #expect(throws: VersionError.self) { try VersionRange(">=1.2.x.4") }
        #expect(error?.message == "'>=1.2.x.4' is not a valid version range: '1.2.x.4' has more than three components")
        #expect(error?.description == error?.message)
    }

    @Test func descriptionIsTheTrimmedText() throws {
        #expect(try VersionRange("  ^1.2  ").description == "^1.2")
        #expect(try VersionRange("\t>=1.0.0\t<2.0.0\n").description == ">=1.0.0\t<2.0.0")
        #expect(try VersionRange("1.2.3 - 2.3.4").description == "1.2.3 - 2.3.4")
        #expect(VersionRange.any.description == "*")
        #expect(VersionRange.any.normalized == "*")
        #expect(VersionRange(parsing: "^1.2")?.normalized == ">=1.2.0 <2.0.0-0")
    }

    @Test func equalityFollowsTheDesugaredSets() throws {
        #expect(try VersionRange("1.2") == VersionRange("1.2.x"))
        // Same default desugaring, but with includePrerelease `1.2.*` starts at 1.2.0-0 and `~1.2` at 1.2.0.
        #expect(try VersionRange("1.2.*") != VersionRange("~1.2"))
        #expect(try VersionRange("1.2") == VersionRange("=1.2.X"))
        #expect(try VersionRange("x") == VersionRange.any)
        #expect(try VersionRange("^1.2.3") == VersionRange(">=1.2.3 <2.0.0-0"))
        #expect(try VersionRange("^1.2.3") != VersionRange("^1.2.4"))
        #expect(try VersionRange("^1.2") != VersionRange(">=1.2.0 <2.0.0-0"))  // likewise
        let ranges = try ["1.2", "1.2.x", "1.2.*", "^1.2"].map { try VersionRange($0) }
        #expect(Set(ranges).count == 2)
    }

    @Test func neverMatchingRangesAreAccepted() throws {
        let range = try VersionRange(">2.0.0 <1.0.0")
        for version in ["0.5.0", "1.5.0", "3.0.0", "1.5.0-beta"] {
            #expect(!range.contains(try SemanticVersion(version), includePrerelease: true))
        }
        #expect(try VersionRange(">x").normalized == "<0.0.0-0")
    }

    @Test func codableAsItsText() throws {
        let ranges = try ["^1.2", "1.2.3 - 2.3.4", ">=1.0.0 <2.0.0 || 3.x"].map { try VersionRange($0) }
        let data = try JSONEncoder().encode(ranges)
        #expect(String(decoding: data, as: UTF8.self) == #"["^1.2","1.2.3 - 2.3.4",">=1.0.0 <2.0.0 || 3.x"]"#)
        let decoded = try JSONDecoder().decode([VersionRange].self, from: data)
        #expect(decoded == ranges)
        #expect(decoded.map(\.description) == ranges.map(\.description))
        let error = #expect(throws: VersionError.self) {
            try JSONDecoder().decode([VersionRange].self, from: Data(#"[">="]"#.utf8))
        }
        #expect(error?.message == "'>=' is not a valid version range: '>=' is not followed by a version")
    }
}
