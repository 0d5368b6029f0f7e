import PlugboardTestSupport
import Testing

@testable import PlugboardVersioning

/// Adapted from node-semver's `test/fixtures/range-include.js` and `range-exclude.js`: loose-mode cases,
/// `v` prefixes, and the empty range are left out because this grammar rejects them.
@Suite(.timeLimit(.hangGuard)) struct VersionRangeMatchingTests {
    static let included: [(String, String)] = [
        ("1.0.0 - 2.0.0", "1.2.3"),
        ("1.2.3 - 2.3.4", "2.3.4"),
        ("^1.2.3+build", "1.2.3"),
        ("^1.2.3+build", "1.3.0"),
        ("1.2.3-pre+asdf - 2.4.3-pre+asdf", "1.2.3"),
        ("1.2.3-pre+asdf - 2.4.3-pre+asdf", "1.2.3-pre.2"),
        ("1.2.3-pre+asdf - 2.4.3-pre+asdf", "2.4.3-alpha"),
        ("1.2.3+asdf - 2.4.3+asdf", "1.2.3"),
        ("1.0.0", "1.0.0"),
        ("1.0.0", "1.0.0+build.7"),
        ("=1.0.0", "1.0.0"),
        (">=*", "0.2.4"),
        ("*", "1.2.3"),
        (">=1.0.0", "1.0.0"),
        (">=1.0.0", "1.0.1"),
        (">=1.0.0", "1.1.0"),
        (">1.0.0", "1.0.1"),
        (">1.0.0", "1.1.0"),
        ("<=2.0.0", "2.0.0"),
        ("<=2.0.0", "1.9999.9999"),
        ("<=2.0.0", "0.2.9"),
        ("<2.0.0", "1.9999.9999"),
        ("<2.0.0", "0.2.9"),
        (">= 1.0.0", "1.0.0"),
        (">=  1.0.0", "1.0.1"),
        (">=   1.0.0", "1.1.0"),
        ("> 1.0.0", "1.0.1"),
        (">  1.0.0", "1.1.0"),
        ("<=   2.0.0", "2.0.0"),
        ("<= 2.0.0", "1.9999.9999"),
        ("<=  2.0.0", "0.2.9"),
        ("<    2.0.0", "1.9999.9999"),
        ("<\t2.0.0", "0.2.9"),
        (">=0.1.97", "0.1.97"),
        ("0.1.20 || 1.2.4", "1.2.4"),
        (">=0.2.3 || <0.0.1", "0.0.0"),
        (">=0.2.3 || <0.0.1", "0.2.3"),
        (">=0.2.3 || <0.0.1", "0.2.4"),
        ("2.x.x", "2.1.3"),
        ("1.2.x", "1.2.3"),
        ("1.2.x || 2.x", "2.1.3"),
        ("1.2.x || 2.x", "1.2.3"),
        ("x", "1.2.3"),
        ("X", "0.0.0"),
        ("2.*.*", "2.1.3"),
        ("1.2.*", "1.2.3"),
        ("1.2.* || 2.*", "2.1.3"),
        ("1.2.* || 2.*", "1.2.3"),
        ("1.*", "1.0.0"),
        ("*", "1.2.3"),
        ("2", "2.1.2"),
        ("2.3", "2.3.1"),
        ("~0.0.1", "0.0.1"),
        ("~0.0.1", "0.0.2"),
        ("~x", "0.0.9"),
        ("~2", "2.0.9"),
        ("~2.4", "2.4.0"),
        ("~2.4", "2.4.5"),
        ("~>3.2.1", "3.2.2"),
        ("~1", "1.2.3"),
        ("~>1", "1.2.3"),
        ("~> 1", "1.2.3"),
        ("~1.0", "1.0.2"),
        ("~ 1.0", "1.0.2"),
        ("~ 1.0.3", "1.0.12"),
        ("~1.2.3", "1.2.9"),
        (">=1", "1.0.0"),
        (">= 1", "1.0.0"),
        ("<1.2", "1.1.1"),
        ("< 1.2", "1.1.1"),
        ("~0.5.4-pre", "0.5.5"),
        ("~0.5.4-pre", "0.5.4"),
        ("=0.7.x", "0.7.2"),
        ("<=0.7.x", "0.7.2"),
        (">=0.7.x", "0.7.2"),
        ("<=0.7.x", "0.6.2"),
        ("~1.2.1 >=1.2.3", "1.2.3"),
        ("~1.2.1 =1.2.3", "1.2.3"),
        ("~1.2.1 1.2.3", "1.2.3"),
        ("~1.2.1 >=1.2.3 1.2.3", "1.2.3"),
        ("~1.2.1 1.2.3 >=1.2.3", "1.2.3"),
        (">=1.2.1 1.2.3", "1.2.3"),
        ("1.2.3 >=1.2.1", "1.2.3"),
        (">=1.2.3 >=1.2.1", "1.2.3"),
        (">=1.2.1 >=1.2.3", "1.2.3"),
        (">=1.2", "1.2.8"),
        ("^1.2.3", "1.8.1"),
        ("^0.1.2", "0.1.2"),
        ("^0.1", "0.1.2"),
        ("^0.0.1", "0.0.1"),
        ("^0.0.3", "0.0.3"),
        ("^0.2.3", "0.2.9"),
        ("^1", "1.99.0"),
        ("^1.2", "1.4.2"),
        ("^1.2 ^1", "1.4.2"),
        ("^1.2 || ^2.0", "2.5.0"),
        ("^1.2.3-alpha", "1.2.3-pre"),
        ("^1.2.0-alpha", "1.2.0-pre"),
        ("^0.0.1-alpha", "0.0.1-beta"),
        ("^0.0.1-alpha", "0.0.1"),
        ("^0.1.1-alpha", "0.1.1-beta"),
        ("^x", "1.2.3"),
        ("x - 1.0.0", "0.9.7"),
        ("x - 1.x", "0.9.7"),
        ("1.0.0 - x", "1.9.7"),
        ("1.x - x", "1.9.7"),
        ("1 - 2", "2.9.9"),
        ("1.2 - 3.4", "3.4.99"),
        ("<=7.x", "7.9.9"),
        ("  ^1.2  ||  >=3  ", "3.0.0"),
    ]

    static let excluded: [(String, String)] = [
        ("1.0.0 - 2.0.0", "2.2.3"),
        ("1.2.3 - 2.3.4", "2.3.5"),
        ("1.2.3+asdf - 2.4.3+asdf", "1.2.3-pre.2"),
        ("1.2.3+asdf - 2.4.3+asdf", "2.4.3-alpha"),
        ("^1.2.3+build", "2.0.0"),
        ("^1.2.3+build", "1.2.0"),
        ("^1.2.3", "1.2.3-pre"),
        ("^1.2", "1.2.0-pre"),
        (">1.2", "1.3.0-beta"),
        ("<=1.2.3", "1.2.3-beta"),
        ("^1.2.3", "1.2.3-beta"),
        ("=0.7.x", "0.7.0-asdf"),
        (">=0.7.x", "0.7.0-asdf"),
        ("1.0.0", "1.0.1"),
        (">=1.0.0", "0.0.0"),
        (">=1.0.0", "0.0.1"),
        (">=1.0.0", "0.1.0"),
        (">1.0.0", "0.0.1"),
        (">1.0.0", "0.1.0"),
        (">1.0.0", "1.0.0"),
        ("<=2.0.0", "3.0.0"),
        ("<=2.0.0", "2.9999.9999"),
        ("<=2.0.0", "2.2.9"),
        ("<2.0.0", "2.9999.9999"),
        ("<2.0.0", "2.2.9"),
        ("<2.0.0", "2.0.0"),
        (">=0.1.97", "0.1.93"),
        ("0.1.20 || 1.2.4", "1.2.3"),
        (">=0.2.3 || <0.0.1", "0.0.3"),
        (">=0.2.3 || <0.0.1", "0.2.2"),
        ("2.x.x", "1.1.3"),
        ("2.x.x", "3.1.3"),
        ("1.2.x", "1.3.3"),
        ("1.2.x || 2.x", "3.1.3"),
        ("1.2.x || 2.x", "1.1.3"),
        ("2.*.*", "1.1.3"),
        ("2.*.*", "3.1.3"),
        ("1.2.*", "1.3.3"),
        ("1.2.* || 2.*", "3.1.3"),
        ("1.2.* || 2.*", "1.1.3"),
        ("2", "1.1.2"),
        ("2", "3.0.0"),
        ("2.3", "2.4.1"),
        ("~0.0.1", "0.1.0-alpha"),
        ("~0.0.1", "0.1.0"),
        ("~2.4", "2.5.0"),
        ("~2.4", "2.3.9"),
        ("~>3.2.1", "3.3.2"),
        ("~>3.2.1", "3.2.0"),
        ("~1", "0.2.3"),
        ("~>1", "2.2.3"),
        ("~1.0", "1.1.0"),
        ("~1.2.3", "1.3.0"),
        ("~1.2.3", "1.2.2"),
        ("<1", "1.0.0"),
        (">=1.2", "1.1.1"),
        ("~0.5.4-beta", "0.5.4-alpha"),
        ("=0.7.x", "0.8.2"),
        (">=0.7.x", "0.6.2"),
        ("<0.7.x", "0.7.2"),
        ("<1.2.3", "1.2.3-beta"),
        ("=1.2.3", "1.2.3-beta"),
        (">1.2", "1.2.8"),
        (">1", "1.9.9"),
        ("^0.0.1", "0.0.2-alpha"),
        ("^0.0.1", "0.0.2"),
        ("^0.0.3", "0.0.4"),
        ("^0.2.3", "0.3.0"),
        ("^0.2.3", "0.2.2"),
        ("^0", "1.0.0"),
        ("^1.2.3", "2.0.0-alpha"),
        ("^1.2.3", "1.2.2"),
        ("^1.2", "1.1.9"),
        ("^1.2 || ^2.0", "3.0.0"),
        ("^1.0.0", "2.0.0-rc1"),
        ("*", "1.2.3-foo"),
        ("1 - 2", "3.0.0"),
        (">2.0.0 <1.0.0", "1.5.0"),
        (">x", "1.0.0"),
        ("<*", "0.0.0"),
    ]

    @Test(arguments: included)
    func includes(_ range: String, _ version: String) throws {
        let range = try VersionRange(range)
        let version = try SemanticVersion(version)
        #expect(range.contains(version))
        // includePrerelease only ever widens a range.
        #expect(range.contains(version, includePrerelease: true))
    }

    @Test(arguments: excluded)
    func excludes(_ range: String, _ version: String) throws {
        #expect(!(try VersionRange(range)).contains(try SemanticVersion(version)))
    }

    /// node-semver's `{ includePrerelease: true }` fixtures.
    @Test(arguments: [
        ("2.x", "2.0.0-pre.0", true),
        ("2.x", "2.1.0-pre.0", true),
        ("*", "1.0.0-rc1", true),
        ("^1.0.0-0", "1.0.1-rc1", true),
        ("^1.0.0-rc2", "1.0.1-rc1", true),
        ("^1.0.0", "1.0.1-rc1", true),
        ("^1.0.0", "1.1.0-rc1", true),
        ("1.0.0 - 2.0.0", "2.0.0-rc.1", true),
        ("1 - 2", "1.0.0-0", true),
        ("<2.0.0", "2.0.0-beta", true),
        (">=1.2", "1.2.0-beta", true),
        (">1.2", "1.3.0-beta", true),
        ("<=1.2", "1.2.99-beta", true),
        ("^0.1.2", "0.1.2-beta", true),
        ("2.x", "3.0.0-pre.0", false),
        ("^1.0.0", "1.0.0-rc1", false),
        ("^1.2.3-rc2", "2.0.0", false),
        ("^1.0.0", "2.0.0-rc1", false),
        ("~1.2", "1.2.0-beta", false),  // node-semver's tilde keeps its release floor
        ("<1.2", "1.2.0-beta", false),
        ("1.0.0 - 2.0.0", "2.0.1-0", false),
        ("1.2.3", "1.2.3-beta", false),
    ])
    func includePrerelease(_ range: String, _ version: String, _ expected: Bool) throws {
        let range = try VersionRange(range)
        let version = try SemanticVersion(version)
        #expect(range.contains(version, includePrerelease: true) == expected)
        // Every case names a pre-release outside the range's own pre-release comparators: excluded by default.
        #expect(!range.contains(version))
    }

    @Test(arguments: [
        (">=1.2.3-alpha.1", "1.2.3-alpha.7", true),
        (">=1.2.3-alpha.1", "1.2.3-alpha.0", false),
        (">=1.2.3-alpha.1", "1.2.3", true),
        (">=1.2.3-alpha.1", "3.4.5", true),
        (">=1.2.3-alpha.1", "3.4.5-alpha.9", false),
        (">=1.2.3-alpha.1", "1.2.4-alpha.1", false),
        (">1.2.3-alpha.3", "1.2.3-alpha.7", true),
        (">1.2.3-alpha.3", "1.2.3-alpha.3", false),
        ("<1.2.3-rc.1", "1.2.3-beta", true),
        ("<1.2.3-rc.1", "1.2.2-beta", false),
        ("1.2.3-rc.1", "1.2.3-rc.1+build", true),
        ("1.2.3-rc.1", "1.2.3-rc.2", false),
        ("~1.2.3-beta.2", "1.2.3-beta.4", true),
        ("~1.2.3-beta.2", "1.2.4-beta.2", false),
        ("^1.2.3-beta.2", "1.2.3-beta.4", true),
        ("^1.2.3-beta.2", "1.2.4-beta.2", false),
        ("1.2.3-alpha - 1.2.5", "1.2.3-beta", true),
        ("1.2.3 - 1.2.5-rc.1", "1.2.5-beta", true),
        ("1.2.3 - 1.2.5-rc.1", "1.2.5-rc.2", false),
        ("1.2.3 - 1.2.5-rc.1", "1.2.4-rc.2", false),
        // The naming comparator must be in the matching set: here it is in the other one.
        ("1.2.3-alpha || >=1.0.0", "1.2.3-beta", false),
        (">=1.2.3-alpha <1.3.0 || >=2.0.0", "1.2.3-beta", true),
        (">=1.2.3-alpha <1.3.0 || >=2.0.0", "2.0.1-beta", false),
        // `*` next to a set that names a pre-release keeps that set.
        ("* || >=1.2.3-alpha", "1.2.3-beta", true),
        (">=1.2.3-alpha || *", "1.2.3-beta", true),
        ("* || >=1.2.3-alpha", "1.2.4-beta", false),
        ("<2.0.0-0", "1.9.9-beta", false),
        ("<2.0.0", "2.0.0-beta", false),
    ])
    func prereleaseRule(_ range: String, _ version: String, _ expected: Bool) throws {
        let range = try VersionRange(range)
        let version = try SemanticVersion(version)
        #expect(range.contains(version) == expected)
    }

    @Test func includePrereleaseRelaxesTheRule() throws {
        let range = try VersionRange(">=1.2.3-alpha.1")
        #expect(!range.contains(try SemanticVersion("3.4.5-alpha.9")))
        #expect(range.contains(try SemanticVersion("3.4.5-alpha.9"), includePrerelease: true))
        #expect(!range.contains(try SemanticVersion("1.2.3-alpha.0"), includePrerelease: true))
        #expect(!VersionRange.any.contains(try SemanticVersion("1.0.0-beta")))
        #expect(VersionRange.any.contains(try SemanticVersion("1.0.0-beta"), includePrerelease: true))
        #expect(VersionRange.any.contains(try SemanticVersion("0.0.0")))
    }

    @Test func highestSatisfyingVersion() throws {
        let versions = try ["1.2.0", "1.10.0", "1.9.9", "2.0.0", "1.11.0-beta", "0.9.0", "1.1.9"].map { try SemanticVersion($0) }
        #expect(try VersionRange("^1.2").highest(of: versions)?.description == "1.10.0")
        #expect(try VersionRange("^1.2").highest(of: versions, includePrerelease: true)?.description == "1.11.0-beta")
        #expect(try VersionRange("~1.9").highest(of: versions)?.description == "1.9.9")
        #expect(try VersionRange(">=1.11.0-alpha").highest(of: versions)?.description == "2.0.0")
        #expect(try VersionRange("1.11.0-alpha - 1.11.0").highest(of: versions)?.description == "1.11.0-beta")
        #expect(try VersionRange("<1.2 || ^2").highest(of: versions)?.description == "2.0.0")
        #expect(try VersionRange("<1.2").highest(of: versions.reversed())?.description == "1.1.9")
        #expect(try VersionRange("^3").highest(of: versions) == nil)
        #expect(try VersionRange("*").highest(of: []) == nil)
        // Equal precedence: the first one wins.
        let builds = try ["1.2.3+a", "1.2.3+b", "1.0.0"].map { try SemanticVersion($0) }
        #expect(try VersionRange("1.x").highest(of: builds)?.build == ["a"])
    }

    @Test func largestComponentsDoNotOverflow() throws {
        let max = UInt64.max
        let top = try SemanticVersion("\(max).\(max).\(max)")
        let nearTop = try SemanticVersion("\(max).\(max).0")
        #expect(try VersionRange("^\(max)").contains(top))
        #expect(try VersionRange("~\(max).\(max)").contains(top))
        #expect(try VersionRange("\(max).x").contains(nearTop))
        #expect(try VersionRange("<=\(max).x").contains(top))
        #expect(try VersionRange("1.0.0 - \(max).\(max).\(max)").contains(top, includePrerelease: true))
        #expect(try !VersionRange(">\(max)").contains(top))
        #expect(try !VersionRange(">\(max).\(max)").contains(top))
        #expect(try VersionRange(">\(max - 1)").contains(nearTop))
        #expect(try VersionRange("^0.\(max)").contains(try SemanticVersion("0.\(max).7")))
        #expect(try !VersionRange("^0.\(max)").contains(try SemanticVersion("1.0.0")))
    }
}
