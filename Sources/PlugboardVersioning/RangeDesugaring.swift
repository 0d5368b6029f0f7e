/// Turns parsed ``RangeTerm``s into primitive ``Comparator``s the way node-semver does.
///
/// `includePrerelease` selects node-semver's `includePrerelease` desugaring, in which lower bounds that come
/// from a partial version start at `-0` (the lowest pre-release) and a hyphen range's full-version end
/// `<=a.b.c` becomes `<a.b.(c+1)-0`.
struct RangeDesugaring {
    let includePrerelease: Bool

    /// The simplified comparator sets of a whole range; an empty set matches every version.
    func comparatorSets(_ sets: [[RangeTerm]]) -> [[Comparator]] {
        var result = sets.map { simplify($0.flatMap(comparators(for:))) }
        if result.count > 1 {
            // Sets that can match nothing add nothing, unless they are all there is.
            let satisfiable = result.filter { $0 != [.nothing] }
            result = satisfiable.isEmpty ? [result[0]] : satisfiable
        }
        if result.contains([]) {
            // `*` matches every release (every version with `includePrerelease`): the only other sets worth
            // keeping are those that can let a pre-release through by the pre-release rule.
            var keptAny = false
            result = result.filter { set in
                if set.isEmpty {
                    defer { keptAny = true }
                    return !keptAny
                }
                return !includePrerelease && set.contains(where: \.admitsPrerelease)
            }
        }
        return result
    }

    /// Drops bounds every version meets, collapses a set that holds `<0.0.0-0`, and removes duplicates.
    private func simplify(_ comparators: [Comparator]) -> [Comparator] {
        // node-semver's `replaceGTE0`: `>=0.0.0` (`>=0.0.0-0` with `includePrerelease`) is `*`.
        let floor = Comparator(.greaterOrEqual, .zero(prerelease: includePrerelease ? ["0"] : []))
        var seen: Set<Comparator> = []
        var result: [Comparator] = []
        for comparator in comparators where comparator != floor {
            if comparator == .nothing { return [.nothing] }
            if seen.insert(comparator).inserted { result.append(comparator) }
        }
        return result
    }

    /// The comparators one term stands for; empty means "any version".
    func comparators(for term: RangeTerm) -> [Comparator] {
        switch term {
        case .primitive(let op, let version): primitive(op, version)
        case .tilde(let version): tilde(version)
        case .caret(let version): caret(version)
        case .hyphen(let from, let to): hyphenStart(from) + hyphenEnd(to)
        }
    }

    // MARK: Forms

    /// `1.2.3`, `=1.2.3`, `>1.2.3`, and X-ranges: `1.x`, `1.2`, `*`, `>=1.2`, `<=1.x`, `>x`.
    private func primitive(_ op: Comparator.Operator?, _ v: PartialVersion) -> [Comparator] {
        guard let major = v.major else {
            // `>*` and `<*` allow nothing; `*`, `=*`, `>=*`, `<=*` forbid nothing.
            return op == .greater || op == .less ? [.nothing] : []
        }
        if let minor = v.minor, let patch = v.patch {
            return [Comparator(op ?? .equal, SemanticVersion(unchecked: major, minor, patch, prerelease: v.prerelease))]
        }
        let next = v.minor.map { nextMinor(major, $0) } ?? nextMajor(major)
        switch op {
        case nil, .equal:
            return [lowerBound(major, v.minor ?? 0, 0)] + upperBound(below: next)
        case .greater:  // `>1.2` is `>=1.3.0`; nothing is above the largest representable version
            return next.map { [lowerBound($0.0, $0.1, $0.2)] } ?? [.nothing]
        case .greaterOrEqual:
            return [lowerBound(major, v.minor ?? 0, 0)]
        case .less:  // `<1.2` is `<1.2.0-0`: no 1.2.0 pre-release either
            return upperBound(below: (major, v.minor ?? 0, 0))
        case .lessOrEqual:  // `<=1.2` is `<1.3.0-0`: every 1.2.x
            return upperBound(below: next)
        }
    }

    /// `~1.2.3` is `>=1.2.3 <1.3.0-0`; `~1.2` is `>=1.2.0 <1.3.0-0`; `~1` is `>=1.0.0 <2.0.0-0`.
    private func tilde(_ v: PartialVersion) -> [Comparator] {
        guard let major = v.major else { return [] }
        guard let minor = v.minor else {
            return [Comparator(.greaterOrEqual, .init(unchecked: major, 0, 0))] + upperBound(below: nextMajor(major))
        }
        let start = SemanticVersion(unchecked: major, minor, v.patch ?? 0, prerelease: v.prerelease)
        return [Comparator(.greaterOrEqual, start)] + upperBound(below: nextMinor(major, minor))
    }

    /// `^` allows changes that do not modify the left-most non-zero component of a full version.
    ///
    /// `^1.2.3` is `>=1.2.3 <2.0.0-0`, `^0.2.3` is `>=0.2.3 <0.3.0-0`, `^0.0.3` is `>=0.0.3 <0.0.4-0`;
    /// `^1.2` is `>=1.2.0 <2.0.0-0`, `^0.0` is `>=0.0.0 <0.1.0-0`, `^1` and `^0` cover their major.
    private func caret(_ v: PartialVersion) -> [Comparator] {
        guard let major = v.major else { return [] }
        guard let minor = v.minor else {
            return [lowerBound(major, 0, 0)] + upperBound(below: nextMajor(major))
        }
        guard let patch = v.patch else {
            return [lowerBound(major, minor, 0)] + upperBound(below: major == 0 ? nextMinor(0, minor) : nextMajor(major))
        }
        let end = major != 0 ? nextMajor(major) : minor != 0 ? nextMinor(0, minor) : nextPatch(0, 0, patch)
        let start: Comparator
        if !v.prerelease.isEmpty {
            start = Comparator(.greaterOrEqual, .init(unchecked: major, minor, patch, prerelease: v.prerelease))
        } else if major != 0 {
            // node-semver keeps `>=1.2.3` here even with `includePrerelease`: `^1.0.0` excludes `1.0.0-rc.1`.
            start = Comparator(.greaterOrEqual, .init(unchecked: major, minor, patch))
        } else {
            start = lowerBound(major, minor, patch)
        }
        return [start] + upperBound(below: end)
    }

    /// The start of `A - B`: `>=A`, with missing components as zeros.
    private func hyphenStart(_ v: PartialVersion) -> [Comparator] {
        guard let major = v.major else { return [] }
        if !v.prerelease.isEmpty {
            return [Comparator(.greaterOrEqual, .init(unchecked: major, v.minor ?? 0, v.patch ?? 0, prerelease: v.prerelease))]
        }
        return [lowerBound(major, v.minor ?? 0, v.patch ?? 0)]
    }

    /// The end of `A - B`: `<=B` for a full version, below the next minor or major for a partial one.
    private func hyphenEnd(_ v: PartialVersion) -> [Comparator] {
        guard let major = v.major else { return [] }
        guard let minor = v.minor else { return upperBound(below: nextMajor(major)) }
        guard let patch = v.patch else { return upperBound(below: nextMinor(major, minor)) }
        if includePrerelease && v.prerelease.isEmpty {
            return upperBound(below: nextPatch(major, minor, patch))
        }
        return [Comparator(.lessOrEqual, .init(unchecked: major, minor, patch, prerelease: v.prerelease))]
    }

    // MARK: Bounds

    private typealias Triple = (UInt64, UInt64, UInt64)

    /// `>=M.m.p`, or `>=M.m.p-0` with `includePrerelease`.
    private func lowerBound(_ major: UInt64, _ minor: UInt64, _ patch: UInt64) -> Comparator {
        Comparator(.greaterOrEqual, .init(unchecked: major, minor, patch, prerelease: includePrerelease ? ["0"] : []))
    }

    /// `<M.m.p-0`, below every pre-release of `M.m.p`; none when the bound is past the largest version.
    private func upperBound(below bound: Triple?) -> [Comparator] {
        guard let (major, minor, patch) = bound else { return [] }
        return [Comparator(.less, .init(unchecked: major, minor, patch, prerelease: ["0"]))]
    }

    // The next major, minor or patch release, or nil past `UInt64.max.UInt64.max.UInt64.max`.
    private func nextMajor(_ major: UInt64) -> Triple? {
        major == .max ? nil : (major + 1, 0, 0)
    }
    private func nextMinor(_ major: UInt64, _ minor: UInt64) -> Triple? {
        minor == .max ? nextMajor(major) : (major, minor + 1, 0)
    }
    private func nextPatch(_ major: UInt64, _ minor: UInt64, _ patch: UInt64) -> Triple? {
        patch == .max ? nextMinor(major, minor) : (major, minor, patch + 1)
    }
}

extension Comparator {
    /// Whether, under the pre-release rule, this comparator can let some pre-release through.
    var admitsPrerelease: Bool { version.isPrerelease && !isPrereleaseFloorUpperBound }
}
