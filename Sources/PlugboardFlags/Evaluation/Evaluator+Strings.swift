#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// STR_CONTAINS, STR_STARTS_WITH and STR_ENDS_WITH: byte-wise (UTF-8), as Unleash's engine compares; a
// case-insensitive constraint's values are lowercased when the snapshot is compiled, and the context value once per
// constraint.
extension Evaluator {
    /// Whether the UTF-8 text `bytes` contains, starts or ends with one of the constraint's values in `needles`
    /// (``FlagProgram/needles``). Static, so that calling it copies nothing of the evaluator.
    static func stringMatches(_ bytes: UnsafeBufferPointer<UInt8>, _ constraint: ConstraintRecord, _ needles: ByteStrings) -> Bool {
        guard constraint.caseInsensitive else { return needlesMatch(bytes, constraint, needles) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, bytes.count)) { buffer in
            if lowercaseLatin1(bytes, into: buffer) { return needlesMatch(UnsafeBufferPointer(buffer), constraint, needles) }
            // Beyond Latin-1 the standard library's full lowercase mapping decides (it may change lengths).
            return withBytes(String(decoding: bytes, as: UTF8.self).lowercased()) { needlesMatch($0, constraint, needles) }
        }
    }

    @inline(__always)
    private static func needlesMatch(_ text: UnsafeBufferPointer<UInt8>, _ constraint: ConstraintRecord, _ needles: ByteStrings) -> Bool {
        var index = constraint.first
        let end = index + constraint.count
        while index < end {
            if bytesMatch(text, needles[index], constraint.match) { return true }
            index += 1
        }
        return false
    }

    /// The string's UTF-8 in place (a copy only for a string that is not stored as UTF-8).
    @inline(__always)
    static func withBytes<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// Writes the lowercase of `text` into `buffer` (as long as `text`) when every scalar is in Latin-1, where
    /// lowercasing keeps lengths: `A`–`Z`, and `À`–`Þ` but `×`, gain 0x20. `false` for anything beyond Latin-1.
    static func lowercaseLatin1(_ text: UnsafeBufferPointer<UInt8>, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        let count = text.count
        guard count > 0 else { return true }
        let source = text.baseAddress!
        let target = buffer.baseAddress!
        var index = 0
        // Eight ASCII bytes at a time: a byte in A–Z gets 0x20.
        while index + 8 <= count {
            let word = UnsafeRawPointer(source + index).loadUnaligned(as: UInt64.self)
            guard word & 0x8080_8080_8080_8080 == 0 else { break }
            let upper = ((word &+ 0x3F3F_3F3F_3F3F_3F3F) ^ (word &+ 0x2525_2525_2525_2525)) & 0x8080_8080_8080_8080
            UnsafeMutableRawPointer(target + index).storeBytes(of: word | upper >> 2, as: UInt64.self)
            index += 8
        }
        while index < count {
            let byte = source[index]
            if byte < 0x80 {
                target[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                index += 1
                continue
            }
            // U+0080–U+00FF are C2 or C3 and one continuation byte; anything else falls back.
            guard byte == 0xC2 || byte == 0xC3, index + 1 < count else { return false }
            let next = source[index + 1]
            target[index] = byte
            target[index + 1] = byte == 0xC3 && next < 0x9F && next != 0x97 ? next &+ 0x20 : next
            index += 2
        }
        return true
    }

    /// Byte-wise prefix, suffix or substring test.
    @inline(__always)
    static func bytesMatch(_ haystack: UnsafeBufferPointer<UInt8>, _ pattern: UnsafeBufferPointer<UInt8>, _ match: StringMatch) -> Bool {
        let count = pattern.count
        guard haystack.count >= count else { return false }
        guard count > 0 else { return true }
        let text = haystack.baseAddress!
        let needle = pattern.baseAddress!
        switch match {
        case .startsWith: return memcmp(text, needle, count) == 0
        case .endsWith: return memcmp(text + (haystack.count - count), needle, count) == 0
        case .contains:
            let first = needle[0]
            var start = 0
            let last = haystack.count - count
            while start <= last {
                if text[start] == first, count == 1 || memcmp(text + start + 1, needle + 1, count - 1) == 0 { return true }
                start += 1
            }
            return false
        }
    }
}
