/// A version number that follows Semantic Versioning 2.0.0 exactly.
///
/// Parsing is strict: three numeric components without leading zeros, pre-release identifiers that are
/// non-empty, alphanumeric or hyphen, and numeric ones without leading zeros; build metadata is kept but
/// ignored for precedence and equality, as the specification says (§10, §11).
///
/// ```swift
/// let v = try SemanticVersion("1.0.0-alpha.1")
/// v < (try SemanticVersion("1.0.0"))   // true
/// ```
public struct SemanticVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The major version: incompatible API changes.
    public let major: UInt64
    /// The minor version: backwards-compatible additions.
    public let minor: UInt64
    /// The patch version: backwards-compatible fixes.
    public let patch: UInt64
    /// The pre-release identifiers (`alpha`, `1` in `1.0.0-alpha.1`); empty for a release.
    public let prerelease: [String]
    /// The build-metadata identifiers (`build`, `5` in `1.0.0+build.5`); ignored for precedence.
    public let build: [String]

    /// Creates a version from its parts, validating the identifiers.
    public init(major: UInt64, minor: UInt64, patch: UInt64, prerelease: [String] = [], build: [String] = []) throws(VersionError) {
        self.init(unchecked: major, minor, patch, prerelease: prerelease, build: build)
        // Name the whole version in errors, identifiers included: `1.2.3` alone would look valid.
        for identifier in prerelease { try Self.validatePrerelease(identifier, in: description) }
        for identifier in build { try Self.validateBuild(identifier, in: description) }
    }

    /// Creates a version from parts the caller has already validated.
    init(unchecked major: UInt64, _ minor: UInt64, _ patch: UInt64, prerelease: [String] = [], build: [String] = []) {
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = prerelease
        self.build = build
    }

    /// Parses a strict SemVer 2.0.0 string such as `1.4.0`, `2.0.0-rc.1` or `1.0.0+20130313144700`.
    ///
    /// - Throws: ``VersionError`` naming what is wrong, for example a leading zero or an empty identifier.
    public init(_ text: String) throws(VersionError) {
        var rest = Substring(text)
        var build: [String] = []
        var prerelease: [String] = []
        if let plus = rest.firstIndex(of: "+") {
            build = rest[rest.index(after: plus)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            rest = rest[..<plus]
            if build == [""] { throw VersionError("'\(text)' is not a valid version: build metadata after '+' is empty") }
        }
        if let dash = rest.firstIndex(of: "-") {
            prerelease = rest[rest.index(after: dash)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            rest = rest[..<dash]
        }
        let core = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard core.count == 3 else {
            throw VersionError("'\(text)' is not a valid version: expected MAJOR.MINOR.PATCH, for example 1.4.0")
        }
        var numbers: [UInt64] = []
        for (name, part) in zip(["major", "minor", "patch"], core) {
            guard !part.isEmpty, part.allSatisfy(\.isASCIIDigit) else {
                throw VersionError("'\(text)' is not a valid version: the \(name) component '\(part)' is not a number")
            }
            guard part == "0" || part.first != "0" else {
                throw VersionError("'\(text)' is not a valid version: the \(name) component '\(part)' has a leading zero")
            }
            guard let number = UInt64(part) else {
                throw VersionError("'\(text)' is not a valid version: the \(name) component '\(part)' is too large")
            }
            numbers.append(number)
        }
        for identifier in prerelease { try Self.validatePrerelease(identifier, in: text) }
        for identifier in build { try Self.validateBuild(identifier, in: text) }
        self.major = numbers[0]
        self.minor = numbers[1]
        self.patch = numbers[2]
        self.prerelease = prerelease
        self.build = build
    }

    /// Parses `text`, returning `nil` when it is not a strict SemVer 2.0.0 version.
    public init?(parsing text: String) {
        guard let version = try? SemanticVersion(text) else { return nil }
        self = version
    }

    /// True when the version has pre-release identifiers (`1.0.0-beta`).
    public var isPrerelease: Bool { !prerelease.isEmpty }

    /// The same version without pre-release identifiers or build metadata.
    public var release: SemanticVersion {
        SemanticVersion(unchecked: major, minor, patch)
    }

    /// The canonical text, `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`.
    public var description: String {
        var text = "\(major).\(minor).\(patch)"
        if !prerelease.isEmpty { text += "-" + prerelease.joined(separator: ".") }
        if !build.isEmpty { text += "+" + build.joined(separator: ".") }
        return text
    }

    /// Equality ignores build metadata (SemVer §10).
    public static func == (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        lhs.major == rhs.major && lhs.minor == rhs.minor && lhs.patch == rhs.patch && lhs.prerelease == rhs.prerelease
    }

    /// Hashing ignores build metadata, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(major)
        hasher.combine(minor)
        hasher.combine(patch)
        hasher.combine(prerelease)
    }

    /// Precedence as defined by SemVer §11.
    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        if lhs.major != rhs.major { return lhs.major < rhs.major }
        if lhs.minor != rhs.minor { return lhs.minor < rhs.minor }
        if lhs.patch != rhs.patch { return lhs.patch < rhs.patch }
        switch (lhs.prerelease.isEmpty, rhs.prerelease.isEmpty) {
        case (true, true), (true, false): return false  // a release is never below its pre-releases
        case (false, true): return true
        case (false, false): break
        }
        for (l, r) in zip(lhs.prerelease, rhs.prerelease) where l != r {
            return precedes(l, r)
        }
        return lhs.prerelease.count < rhs.prerelease.count
    }

    /// Compares two different pre-release identifiers (§11.4): numeric ones numerically, and below alphanumeric ones.
    private static func precedes(_ l: String, _ r: String) -> Bool {
        let lNumeric = l.allSatisfy(\.isASCIIDigit)
        let rNumeric = r.allSatisfy(\.isASCIIDigit)
        switch (lNumeric, rNumeric) {
        case (true, true):
            // No leading zeros, so a shorter digit string is a smaller number; no overflow for long ones.
            return l.count != r.count ? l.count < r.count : l < r
        case (true, false): return true
        case (false, true): return false
        case (false, false): return Array(l.utf8).lexicographicallyPrecedes(Array(r.utf8))  // ASCII sort order
        }
    }

    private static func validatePrerelease(_ identifier: String, in text: String) throws(VersionError) {
        if let problem = prereleaseProblem(identifier) {
            throw VersionError("'\(text)' is not a valid version: \(problem)")
        }
    }

    private static func validateBuild(_ identifier: String, in text: String) throws(VersionError) {
        if let problem = buildProblem(identifier) {
            throw VersionError("'\(text)' is not a valid version: \(problem)")
        }
    }

    /// What is wrong with a pre-release identifier (§9), or `nil` when it is valid.
    static func prereleaseProblem(_ identifier: some StringProtocol) -> String? {
        guard !identifier.isEmpty else { return "a pre-release identifier is empty" }
        guard identifier.allSatisfy(\.isSemVerIdentifierCharacter) else {
            return "the pre-release identifier '\(identifier)' may contain only [0-9A-Za-z-]"
        }
        if identifier.allSatisfy(\.isASCIIDigit), identifier.count > 1, identifier.first == "0" {
            return "the numeric pre-release identifier '\(identifier)' has a leading zero"
        }
        return nil
    }

    /// What is wrong with a build-metadata identifier (§10), or `nil` when it is valid.
    static func buildProblem(_ identifier: some StringProtocol) -> String? {
        guard !identifier.isEmpty else { return "a build-metadata identifier is empty" }
        guard identifier.allSatisfy(\.isSemVerIdentifierCharacter) else {
            return "the build identifier '\(identifier)' may contain only [0-9A-Za-z-]"
        }
        return nil
    }
}

extension SemanticVersion: Codable {
    /// Decodes a version from its string form.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        self = try SemanticVersion(text)
    }

    /// Encodes the version as its canonical string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A version or version range that could not be parsed; the message names the text and what is wrong.
public struct VersionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One sentence that names the offending text and the problem.
    public let message: String

    /// Creates an error with a readable message.
    public init(_ message: String) { self.message = message }

    /// The ``message``.
    public var description: String { message }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber && ("0"..."9").contains(self) }
    var isSemVerIdentifierCharacter: Bool {
        guard isASCII else { return false }
        return ("0"..."9").contains(self) || ("a"..."z").contains(self) || ("A"..."Z").contains(self) || self == "-"
    }
}
