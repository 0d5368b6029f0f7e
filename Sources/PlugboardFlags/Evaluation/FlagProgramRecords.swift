import PlugboardVersioning

/// A context field as the program refers to it: the kind, and for a property its interned name.
struct FieldRef: Equatable {
    enum Kind: UInt8 {
        case userId, sessionId, environment, appName, remoteAddress, currentTime, property
        /// Rollout stickiness only: a random number.
        case random
    }

    var kind: Kind
    /// The property's name in ``FlagProgram/strings`` (interned), or -1.
    var name: Int32
    /// The key a per-call override of this field has (``ContextField/overrideName``), or -1.
    var override: Int32
    /// The property name's ``NameTable/wordHash(_:)`` (0 for a standard field).
    var hash: UInt32 = 0

    /// A standard field: the program interns the standard names first, at their kinds' raw values.
    static func standard(_ kind: Kind) -> FieldRef { FieldRef(kind: kind, name: -1, override: Int32(kind.rawValue)) }
}

struct FlagRecord {
    var name: Int32
    /// The bucketing hash of `"name:"`, for rollouts without a group id.
    var namePrefix: MurmurHash3.Prefix
    var enabled: Bool
    var broken: Bool
    var firstStrategy: Int32
    var strategyCount: Int32
    /// The flag's variant set, or -1.
    var variants: Int32
    var firstDependency: Int32
    var dependencyCount: Int32
}

struct StrategyRecord {
    enum Rule: UInt8 { case always, never, userIds, rollout, random, remoteAddress, hostname }

    var rule: Rule
    /// `rollout`: 0…100; `random`: the parsed percentage (it may be above 100).
    var percent: UInt64 = 0
    /// `userIds`: the set in `sets`; `hostname`: the set in `hostSets`; `rollout`: the first stickiness source in
    /// `fields`; `remoteAddress`: the first network.
    var first: Int32 = 0
    var count: Int32 = 0
    /// The rollout's group id in `strings`; -1 is the evaluated flag's name.
    var groupId: Int32 = -1
    /// The bucketing hash of `"groupId:"` when the rollout has a group id.
    var groupPrefix = MurmurHash3.Prefix(groupId: "", seed: 0)
    var firstConstraint: Int32 = 0
    var constraintCount: Int32 = 0
    /// The strategy's own variant set, or -1.
    var variants: Int32 = -1
    var isTargeted: Bool
}

struct ConstraintRecord {
    enum Test: UInt8 { case never, inList, notInList, string, number, date, semver, regex, cidr }

    var field: FieldRef
    var test: Test = .never
    /// The orders of the context value against the constraint's that satisfy it: bit 0 less, 1 equal, 2 greater.
    var orders: UInt8 = 0
    var match: StringMatch = .contains
    var caseInsensitive = false
    var inverted: Bool
    /// Where the evaluation keeps the field's parsed value for the flag's other constraints that parse it the same
    /// way (``ParsedSlots``); -1 for none.
    var slot: Int8 = -1
    /// The first value in the test's table (`sets`, `strings`, `numbers`, `instants`, `versions`, `regexes`,
    /// `networks`) and how many.
    var first: Int32 = 0
    var count: Int32 = 0
}

/// A constraint's version: its numbers, and its pre-release identifiers joined by `.` in ``FlagProgram/needles``.
struct VersionKey {
    var major: UInt64
    var minor: UInt64
    var patch: UInt64
    /// -1 for a release.
    var prerelease: Int32

    /// The order of `version` against this one (negative, zero, positive) when the numbers decide it or one of
    /// the two is a release; `nil` when the pre-release identifiers must be compared.
    @inline(__always)
    func order(of version: SemanticVersionNumbers) -> Int? {
        if version.major != major { return version.major < major ? -1 : 1 }
        if version.minor != minor { return version.minor < minor ? -1 : 1 }
        if version.patch != patch { return version.patch < patch ? -1 : 1 }
        switch (version.prereleaseStart == version.prereleaseEnd, prerelease < 0) {
        case (true, true): return 0
        case (true, false): return 1  // a release is above its pre-releases
        case (false, true): return -1
        case (false, false): return nil
        }
    }
}

struct VariantSetRecord {
    var first: Int32
    var count: Int32
    var totalWeight: UInt32
    /// `userId`, else `sessionId`, else random; otherwise `stickiness`.
    var standardStickiness: Bool
    var stickiness: FieldRef
    var groupId: Int32
    /// The variant bucketing hash of `"groupId:"`.
    var groupPrefix: MurmurHash3.Prefix
    var weightedCount: Int32
}

/// A variant's weight and overrides; its name and payload are ``FlagProgram/variantShapes`` at the same position.
struct VariantRecord {
    var weight: UInt32
    var firstOverride: Int32
    var overrideCount: Int32
}

struct OverrideRecord {
    var field: FieldRef
    var set: Int32
}

struct DependencyRecord {
    /// The parent's position, or -1 when it does not exist.
    var parent: Int32
    var expectEnabled: Bool
    /// The expected variant names in `strings` (none: any).
    var firstVariant: Int32
    var variantCount: Int32
}
