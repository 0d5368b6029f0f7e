// Pre-release order (SemVer 2.0.0 §11), on the identifiers' bytes in place.
extension Evaluator {
    /// The order of two pre-releases, each its identifiers joined by `.` (both valid and non-empty): negative,
    /// zero or positive. Numeric identifiers compare numerically and below alphanumeric ones, alphanumeric ones in
    /// ASCII order, and fewer identifiers that are all equal come first.
    static func comparePrerelease(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        var left = 0
        var right = 0
        while right < rhs.count {
            guard left < lhs.count else { return -1 }
            let leftEnd = identifierEnd(lhs, from: left)
            let rightEnd = identifierEnd(rhs, from: right)
            let order = compareIdentifier(
                UnsafeBufferPointer(rebasing: lhs[left..<leftEnd]), UnsafeBufferPointer(rebasing: rhs[right..<rightEnd]))
            if order != 0 { return order }
            left = leftEnd + 1
            right = rightEnd + 1
        }
        return left < lhs.count ? 1 : 0
    }

    @inline(__always)
    private static func identifierEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var end = start
        while end < bytes.count, bytes[end] != 0x2E { end += 1 }
        return end
    }

    private static func compareIdentifier(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        let leftNumeric = lhs.allSatisfy { $0 &- 0x30 < 10 }
        let rightNumeric = rhs.allSatisfy { $0 &- 0x30 < 10 }
        if leftNumeric != rightNumeric { return leftNumeric ? -1 : 1 }
        // Numbers have no leading zeros, so a shorter one is smaller.
        if leftNumeric, lhs.count != rhs.count { return lhs.count < rhs.count ? -1 : 1 }
        for index in 0..<min(lhs.count, rhs.count) where lhs[index] != rhs[index] { return lhs[index] < rhs[index] ? -1 : 1 }
        return lhs.count == rhs.count ? 0 : (lhs.count < rhs.count ? -1 : 1)
    }
}
