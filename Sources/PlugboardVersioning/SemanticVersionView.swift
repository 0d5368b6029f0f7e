/// A strict SemVer 2.0.0 version read in place from a string: the numbers parsed, the pre-release kept as a slice of
/// the text. Parsing and comparing allocate nothing, which is what flag evaluation needs for context values.
///
/// It accepts exactly the strings ``SemanticVersion/init(parsing:)`` accepts (the tests check both on the same
/// inputs), and orders like ``SemanticVersion`` (§11; build metadata ignored).
package struct SemanticVersionView: Sendable {
    package let major: UInt64
    package let minor: UInt64
    package let patch: UInt64
    /// The pre-release identifiers joined by `.`, without the `-`; empty for a release.
    package let prerelease: Substring

    /// Reads `text`; `nil` when it is not a strict SemVer 2.0.0 version.
    package init?(_ text: String) {
        // Everything is checked on the bytes in place; the pre-release is then cut from the string.
        let scanned =
            text.utf8.withContiguousStorageIfAvailable { Self.scan($0) }
            ?? Array(text.utf8).withUnsafeBufferPointer { Self.scan($0) }
        guard let (major, minor, patch, prerelease) = scanned else { return nil }
        self.major = major
        self.minor = minor
        self.patch = patch
        if prerelease.isEmpty {
            self.prerelease = Substring()
        } else {
            let utf8 = text.utf8
            let start = utf8.index(utf8.startIndex, offsetBy: prerelease.lowerBound)
            self.prerelease = text[start..<utf8.index(start, offsetBy: prerelease.count)]
        }
    }

    /// `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`: the numbers and the pre-release's byte range (empty for none).
    fileprivate static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64, UInt64, Range<Int>)? {
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        var index = 0
        // Digits without a leading zero, fitting UInt64 (up to 19 digits always do).
        @inline(__always) func number() -> UInt64? {
            let start = index
            var value: UInt64 = 0
            while index < count {
                let digit = base[index] &- 0x30
                guard digit < 10 else { break }
                if index &- start < 19 {
                    value = value &* 10 &+ UInt64(digit)
                } else {
                    let (product, overflow1) = value.multipliedReportingOverflow(by: 10)
                    let (sum, overflow2) = product.addingReportingOverflow(UInt64(digit))
                    guard !overflow1, !overflow2 else { return nil }
                    value = sum
                }
                index &+= 1
            }
            guard start != index, base[start] != 0x30 || index &- start == 1 else { return nil }
            return value
        }
        @inline(__always) func dot() -> Bool {
            guard index < count, base[index] == 0x2E else { return false }
            index &+= 1
            return true
        }
        guard let major = number(), dot(), let minor = number(), dot(), let patch = number() else { return nil }
        if index == count { return (major, minor, patch, index..<index) }
        var prerelease = index..<index
        if base[index] == 0x2D {
            index &+= 1
            let start = index
            while index < count, base[index] != 0x2B { index &+= 1 }
            guard validIdentifiers(UnsafeBufferPointer(start: base + start, count: index &- start), numericLeadingZeroAllowed: false)
            else {
                return nil
            }
            prerelease = start..<index
        }
        if index < count {
            guard base[index] == 0x2B else { return nil }
            let rest = UnsafeBufferPointer(start: base + index + 1, count: count &- index &- 1)
            guard validIdentifiers(rest, numericLeadingZeroAllowed: true) else { return nil }
        }
        return (major, minor, patch, prerelease)
    }

    private static func digit(_ byte: UInt8) -> UInt8? { (0x30...0x39).contains(byte) ? byte - 0x30 : nil }

    /// Dot-separated identifiers, each non-empty and of `[0-9A-Za-z-]` (numeric pre-release ones without a leading
    /// zero), read through a pointer: context versions are checked on every evaluation that reads them.
    private static func validIdentifiers(_ bytes: UnsafeBufferPointer<UInt8>, numericLeadingZeroAllowed: Bool) -> Bool {
        guard var cursor = bytes.baseAddress, !bytes.isEmpty else { return false }
        let end = cursor + bytes.count
        /// Whether the identifier from `start` to `cursor` is non-empty and, if numeric, allowed its first digit.
        @inline(__always) func complete(_ start: UnsafePointer<UInt8>, numeric: Bool) -> Bool {
            cursor > start && (numericLeadingZeroAllowed || !(numeric && start.pointee == 0x30 && cursor - start > 1))
        }
        var start = cursor
        var numeric = true
        while cursor < end {
            let byte = cursor.pointee
            if byte == 0x2E {
                guard complete(start, numeric: numeric) else { return false }
                cursor += 1
                start = cursor
                numeric = true
                continue
            }
            if byte &- 0x30 >= 10 {
                // A letter (either case: `| 0x20` lowers A–Z and moves no other byte into a–z) or `-`.
                guard (byte | 0x20) &- 0x61 < 26 || byte == 0x2D else { return false }
                numeric = false
            }
            cursor += 1
        }
        return complete(start, numeric: numeric)
    }

    /// The order of `self` against `other`: negative, zero or positive (§11).
    package func compare(to other: SemanticVersion) -> Int {
        if major != other.major { return major < other.major ? -1 : 1 }
        if minor != other.minor { return minor < other.minor ? -1 : 1 }
        if patch != other.patch { return patch < other.patch ? -1 : 1 }
        switch (prerelease.isEmpty, other.prerelease.isEmpty) {
        case (true, true): return 0
        case (true, false): return 1  // a release is above its pre-releases
        case (false, true): return -1
        case (false, false): break
        }
        var rest = prerelease.utf8[...]
        for identifier in other.prerelease {
            guard !rest.isEmpty else { return -1 }  // fewer identifiers, all equal so far
            let cut = rest.firstIndex(of: 0x2E) ?? rest.endIndex
            let order = Self.compareIdentifier(rest[rest.startIndex..<cut], identifier[...].utf8)
            if order != 0 { return order }
            rest = cut == rest.endIndex ? rest[cut...] : rest[rest.index(after: cut)...]
        }
        return rest.isEmpty ? 0 : 1
    }

    /// The order of `self` against a version with the same numbers whose pre-release identifiers, joined by `.`,
    /// are `joined` (non-empty), when `self` is a pre-release too: what ``compare(to:)`` does after the numbers,
    /// without the other version's array of identifiers.
    package func comparePrerelease(to joined: String) -> Int {
        var rest = prerelease.utf8[...]
        var other = joined[...].utf8
        while !other.isEmpty {
            guard !rest.isEmpty else { return -1 }  // fewer identifiers, all equal so far
            let cut = rest.firstIndex(of: 0x2E) ?? rest.endIndex
            let otherCut = other.firstIndex(of: 0x2E) ?? other.endIndex
            let order = Self.compareIdentifier(rest[rest.startIndex..<cut], other[other.startIndex..<otherCut])
            if order != 0 { return order }
            rest = cut == rest.endIndex ? rest[cut...] : rest[rest.index(after: cut)...]
            other = otherCut == other.endIndex ? other[otherCut...] : other[other.index(after: otherCut)...]
        }
        return rest.isEmpty ? 0 : 1
    }

    /// Compares two pre-release identifiers (§11.4): numeric ones numerically and below alphanumeric ones,
    /// alphanumeric ones in ASCII order.
    private static func compareIdentifier(_ l: Substring.UTF8View, _ r: Substring.UTF8View) -> Int {
        let lNumeric = l.allSatisfy { digit($0) != nil }
        let rNumeric = r.allSatisfy { digit($0) != nil }
        switch (lNumeric, rNumeric) {
        case (true, false): return -1
        case (false, true): return 1
        case (true, true):
            // No leading zeros, so a shorter digit string is a smaller number.
            let (lCount, rCount) = (l.count, r.count)
            if lCount != rCount { return lCount < rCount ? -1 : 1 }
            fallthrough
        case (false, false):
            var (li, ri) = (l.startIndex, r.startIndex)
            while li < l.endIndex, ri < r.endIndex {
                if l[li] != r[ri] { return l[li] < r[ri] ? -1 : 1 }
                l.formIndex(after: &li)
                r.formIndex(after: &ri)
            }
            if li < l.endIndex { return 1 }
            return ri < r.endIndex ? -1 : 0
        }
    }
}

/// A strict SemVer 2.0.0 version's numbers and where its pre-release lies in the text: a plain value (no reference to
/// the text), for an evaluation's cache of parsed context values. It accepts exactly what ``SemanticVersionView``
/// accepts; when the numbers do not decide an order, read the text again as a ``SemanticVersionView``.
package struct SemanticVersionNumbers: Sendable, BitwiseCopyable {
    package let major: UInt64
    package let minor: UInt64
    package let patch: UInt64
    /// The pre-release identifiers' UTF-8 offsets in the text; empty for a release.
    package var prerelease: Range<Int> { Range(uncheckedBounds: (prereleaseStart, prereleaseEnd)) }
    // Two integers rather than a `Range`, so that the value is bitwise-copyable (an evaluation keeps it in raw memory);
    // stored and visible, so that another module reads them without a call.
    package let prereleaseStart: Int
    package let prereleaseEnd: Int

    package init?(_ text: String) {
        let scanned =
            text.utf8.withContiguousStorageIfAvailable { SemanticVersionView.scan($0) }
            ?? Array(text.utf8).withUnsafeBufferPointer { SemanticVersionView.scan($0) }
        guard let (major, minor, patch, prerelease) = scanned else { return nil }
        self.major = major
        self.minor = minor
        self.patch = patch
        prereleaseStart = prerelease.lowerBound
        prereleaseEnd = prerelease.upperBound
    }

    /// Reads UTF-8 text in place; `nil` when it is not a strict SemVer 2.0.0 version.
    @inline(__always)
    package init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard let (major, minor, patch, prerelease) = SemanticVersionView.scan(bytes) else { return nil }
        self.major = major
        self.minor = minor
        self.patch = patch
        prereleaseStart = prerelease.lowerBound
        prereleaseEnd = prerelease.upperBound
    }
}
