/// One primitive comparison such as `>=1.2.0` or `<2.0.0-0`: the atoms every ``VersionRange`` desugars to.
struct Comparator: Sendable, Hashable, CustomStringConvertible {
    /// The relation a version must have to ``version``.
    enum Operator: String, Sendable, Hashable {
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case equal = "="
    }

    let op: Operator
    /// The bound, without build metadata.
    let version: SemanticVersion

    init(_ op: Operator, _ version: SemanticVersion) {
        self.op = op
        self.version = SemanticVersion(unchecked: version.major, version.minor, version.patch, prerelease: version.prerelease)
    }

    /// `<0.0.0-0`: no version is below it, so a comparator set holding it matches nothing.
    static let nothing = Comparator(.less, .zero(prerelease: ["0"]))

    /// Whether `candidate` stands in this relation to the bound (SemVer precedence; build metadata ignored).
    func matches(_ candidate: SemanticVersion) -> Bool {
        switch op {
        case .less: candidate < version
        case .lessOrEqual: candidate <= version
        case .greater: candidate > version
        case .greaterOrEqual: candidate >= version
        case .equal: candidate == version
        }
    }

    /// True for an upper bound `<X-0`, which can never let a pre-release of `X` through.
    var isPrereleaseFloorUpperBound: Bool { op == .less && version.prerelease == ["0"] }

    /// node-semver's spelling: `=` is left out, so `1.2.3` means exactly that version.
    var description: String { op == .equal ? version.description : op.rawValue + version.description }
}

extension SemanticVersion {
    /// `0.0.0` with the given pre-release identifiers (which must be valid).
    static func zero(prerelease: [String] = []) -> SemanticVersion {
        SemanticVersion(unchecked: 0, 0, 0, prerelease: prerelease)
    }
}
