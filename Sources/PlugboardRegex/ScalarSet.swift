/// A set of Unicode code points as sorted, disjoint, non-adjacent ranges: the value of a character class while a
/// pattern is parsed (`[a-z&&[^aeiou]]`, `\p{Greek}`, a case-folded literal).
///
/// In `(?-u)` mode the same type holds a set of bytes (values up to `0xFF`).
struct ScalarSet: Sendable, Equatable {
    /// The largest Unicode code point.
    static let maxScalar: UInt32 = 0x10_FFFF

    /// Sorted, disjoint and non-adjacent.
    private(set) var ranges: [ClosedRange<UInt32>]

    static let empty = ScalarSet(normalized: [])
    static let all = ScalarSet(normalized: [0...maxScalar])

    private init(normalized: [ClosedRange<UInt32>]) { ranges = normalized }

    /// A set of the given ranges, in any order, overlapping or not.
    init(_ ranges: [ClosedRange<UInt32>]) {
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        var merged: [ClosedRange<UInt32>] = []
        merged.reserveCapacity(sorted.count)
        for range in sorted {
            if let last = merged.last, range.lowerBound <= last.upperBound &+ 1 {
                if range.upperBound > last.upperBound { merged[merged.count - 1] = last.lowerBound...range.upperBound }
            } else {
                merged.append(range)
            }
        }
        self.init(normalized: merged)
    }

    init(scalar: UInt32) { self.init(normalized: [scalar...scalar]) }

    var isEmpty: Bool { ranges.isEmpty }

    /// The single member, when there is exactly one.
    var singleScalar: UInt32? {
        ranges.count == 1 && ranges[0].lowerBound == ranges[0].upperBound ? ranges[0].lowerBound : nil
    }

    /// The largest member (`nil` when empty).
    var maximum: UInt32? { ranges.last?.upperBound }

    func contains(_ value: UInt32) -> Bool {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < value {
                low = middle + 1
            } else if ranges[middle].lowerBound > value {
                high = middle
            } else {
                return true
            }
        }
        return false
    }

    func union(_ other: ScalarSet) -> ScalarSet {
        if other.isEmpty { return self }
        if isEmpty { return other }
        return ScalarSet(ranges + other.ranges)
    }

    /// The complement within `0...maximum` (`0x10FFFF` for code points, `0xFF` for bytes).
    func inverted(upTo maximum: UInt32 = ScalarSet.maxScalar) -> ScalarSet {
        var result: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        var reachedEnd = false
        for range in ranges where range.lowerBound <= maximum {
            if range.lowerBound > next { result.append(next...(range.lowerBound - 1)) }
            if range.upperBound >= maximum {
                reachedEnd = true
                break
            }
            next = range.upperBound + 1
        }
        if !reachedEnd { result.append(next...maximum) }
        return ScalarSet(normalized: result)
    }

    func intersection(_ other: ScalarSet) -> ScalarSet {
        var result: [ClosedRange<UInt32>] = []
        var i = 0
        var j = 0
        while i < ranges.count, j < other.ranges.count {
            let a = ranges[i]
            let b = other.ranges[j]
            let low = max(a.lowerBound, b.lowerBound)
            let high = min(a.upperBound, b.upperBound)
            if low <= high { result.append(low...high) }
            if a.upperBound < b.upperBound { i += 1 } else { j += 1 }
        }
        return ScalarSet(normalized: result)
    }

    func subtracting(_ other: ScalarSet) -> ScalarSet {
        intersection(other.inverted(upTo: Self.maxScalar))
    }

    func symmetricDifference(_ other: ScalarSet) -> ScalarSet {
        union(other).subtracting(intersection(other))
    }

    /// Adds every code point that simple case folding relates to a member (`k` → `k`, `K`, `K` (Kelvin sign)),
    /// as Rust's regex does for `(?i)`. With `asciiOnly`, only ASCII letters fold (`(?-u)` mode).
    func caseFolded(asciiOnly: Bool) -> ScalarSet {
        var added: [ClosedRange<UInt32>] = []
        if asciiOnly {
            for range in ranges {
                let upper = range.clamped(to: 0x41...0x5A)
                let lower = range.clamped(to: 0x61...0x7A)
                if !upper.isEmpty, range.overlaps(0x41...0x5A) { added.append((upper.lowerBound + 32)...(upper.upperBound + 32)) }
                if !lower.isEmpty, range.overlaps(0x61...0x7A) { added.append((lower.lowerBound - 32)...(lower.upperBound - 32)) }
            }
        } else {
            let folding = UnicodeTables.caseFolding
            // Walk the (sorted) foldable code points and the ranges together.
            var index = 0
            for range in ranges {
                while index < folding.keys.count, folding.keys[index] < range.lowerBound { index += 1 }
                while index < folding.keys.count, folding.keys[index] <= range.upperBound {
                    for other in folding.orbits[folding.orbitOfKey[index]] { added.append(other...other) }
                    index += 1
                }
                if index >= folding.keys.count { break }
            }
        }
        return added.isEmpty ? self : ScalarSet(ranges + added)
    }
}
