/// A set of acceptable versions written in npm's range syntax, such as `^1.2`, `>=1.2.0 <2.0.0` or `1.x || 2.x`.
///
/// The grammar and its meaning follow node-semver; <doc:VersionRanges> lists every form and what it
/// desugars to. Parsing is strict: anything outside the grammar is a ``VersionError``.
///
/// ```swift
/// let range = try VersionRange("^1.2")
/// range.contains(try SemanticVersion("1.9.0"))        // true
/// range.contains(try SemanticVersion("2.0.0"))        // false
/// range.contains(try SemanticVersion("1.3.0-beta"))   // false: the pre-release rule
/// range.normalized                                    // ">=1.2.0 <2.0.0-0"
/// ```
///
/// Two ranges are equal when they desugar to the same comparator sets (in both pre-release modes), so `1.2`
/// equals `1.2.x` even though their ``description``s differ.
public struct VersionRange: Sendable, Hashable, CustomStringConvertible {
    /// The text as given, without surrounding whitespace.
    public let description: String
    /// The OR-ed comparator sets for the default matching; an empty set matches every release.
    let sets: [[Comparator]]
    /// The comparator sets desugared for `includePrerelease` matching.
    let prereleaseSets: [[Comparator]]

    /// Parses a range such as `^1.2.3`, `~1.2`, `1.x`, `>=1.2.0 <2.0.0`, `1.2.3 - 2.3.4` or `^1 || ^2`.
    ///
    /// - Throws: ``VersionError`` naming the text and what is wrong with it, for example an empty string,
    ///   a dangling operator (`>=`), a leading zero, or an empty side of `||`. A range that can never match,
    ///   such as `>2.0.0 <1.0.0`, is valid.
    public init(_ text: String) throws(VersionError) {
        let terms = try RangeParser(text: text).parse()
        description = String(text.trimmingRangeWhitespace())
        sets = RangeDesugaring(includePrerelease: false).comparatorSets(terms)
        prereleaseSets = RangeDesugaring(includePrerelease: true).comparatorSets(terms)
    }

    /// Parses `text`, returning `nil` when it is not a valid range.
    public init?(parsing text: String) {
        guard let range = try? VersionRange(text) else { return nil }
        self = range
    }

    /// `*`: every release (and, with `includePrerelease`, every pre-release).
    public static let any: VersionRange = try! VersionRange("*")

    /// Whether `version` satisfies the range, by the pre-release rule.
    ///
    /// A release satisfies the range when it satisfies every comparator of at least one comparator set.
    /// A pre-release (`1.2.3-beta`) must also share its `major.minor.patch` with a comparator of that set that
    /// names a pre-release: `>=1.2.3-alpha.1` contains `1.2.3-alpha.7` but not `1.2.4-alpha.1`.
    public func contains(_ version: SemanticVersion) -> Bool {
        contains(version, includePrerelease: false)
    }

    /// Whether `version` satisfies the range, optionally treating pre-releases like releases.
    ///
    /// With `includePrerelease: true` the pre-release rule is dropped and the range is desugared as node-semver
    /// does with its `includePrerelease` option: bounds that come from a partial version start at the
    /// lowest pre-release, so `1.x` contains `1.0.0-beta` while `<2.0.0-0` still excludes `2.0.0-beta`.
    public func contains(_ version: SemanticVersion, includePrerelease: Bool) -> Bool {
        if includePrerelease {
            return prereleaseSets.contains { $0.allSatisfy { $0.matches(version) } }
        }
        return sets.contains { set in
            guard set.allSatisfy({ $0.matches(version) }) else { return false }
            guard version.isPrerelease else { return true }
            return set.contains {
                $0.version.isPrerelease && $0.version.major == version.major
                    && $0.version.minor == version.minor && $0.version.patch == version.patch
            }
        }
    }

    /// The highest of `versions` that the range contains by the pre-release rule, or `nil` if none does.
    ///
    /// Among versions of equal precedence (differing only in build metadata) the first one is returned.
    public func highest(of versions: some Sequence<SemanticVersion>) -> SemanticVersion? {
        highest(of: versions, includePrerelease: false)
    }

    /// The highest of `versions` that ``contains(_:includePrerelease:)`` accepts, or `nil` if none does.
    public func highest(of versions: some Sequence<SemanticVersion>, includePrerelease: Bool) -> SemanticVersion? {
        var best: SemanticVersion?
        for version in versions where contains(version, includePrerelease: includePrerelease) {
            if best.map({ $0 < version }) ?? true { best = version }
        }
        return best
    }

    /// The desugared comparator sets, such as `>=1.2.0 <2.0.0-0` for `^1.2`.
    ///
    /// Comparators are separated by a space, sets by ` || `; `*` stands for a set that matches every release,
    /// `<0.0.0-0` for one that matches nothing, and an exact version is written without `=`.
    /// The result parses back to a range that matches the same versions by the pre-release rule.
    public var normalized: String { Self.format(sets) }

    /// The desugared comparator sets for `includePrerelease` matching, or for the default when `false`.
    public func normalized(includePrerelease: Bool) -> String {
        Self.format(includePrerelease ? prereleaseSets : sets)
    }

    private static func format(_ sets: [[Comparator]]) -> String {
        sets.map { $0.isEmpty ? "*" : $0.map(\.description).joined(separator: " ") }.joined(separator: " || ")
    }

    /// Equal when both pre-release modes desugar to the same comparator sets.
    public static func == (lhs: VersionRange, rhs: VersionRange) -> Bool {
        lhs.sets == rhs.sets && lhs.prereleaseSets == rhs.prereleaseSets
    }

    /// Hashes the desugared comparator sets, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(sets)
        hasher.combine(prereleaseSets)
    }
}

extension VersionRange: Codable {
    /// Decodes a range from its text, as stored in manifests.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        self = try VersionRange(text)
    }

    /// Encodes the range as its ``description``, the text as given.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
