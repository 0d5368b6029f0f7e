import Crypto
package import Foundation

extension SHA256.Digest {
    /// Whether `text` is this digest in lowercase hex (what ``hex`` gives), compared without making a string.
    package func matchesHex(_ text: UnsafeRawBufferPointer) -> Bool {
        guard text.count == 2 * SHA256.byteCount else { return false }
        let digits: StaticString = "0123456789abcdef"
        let table = UnsafeRawBufferPointer(start: digits.utf8Start, count: 16)
        var index = 0
        for byte in self {
            guard text[index] == table[Int(byte >> 4)], text[index + 1] == table[Int(byte & 0x0F)] else { return false }
            index += 2
        }
        return true
    }

    /// The digest as lower-case hex: the one encoding of every SHA-256 the board stores or compares
    /// (audit hashes, migration checksums, artifact digests).
    ///
    /// Written out by hand: `String(format: "%02x")` per byte cost ~50 µs per hash on Linux, most of the time of
    /// `audit verify` (see Tools/Benchmarks/README.md).
    package var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(2 * SHA256.byteCount)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension SHA256 {
    /// The lower-case hex SHA-256 of `data`.
    package static func hex(_ data: Data) -> String { hash(data: data).hex }
}

extension [UInt8] {
    /// Appends the decimal digits of `value` without formatting a string: the audit chain and the state proof
    /// write lengths and integers this way on their hot paths.
    package mutating func appendDecimal(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        // Int64.min has no positive counterpart: its magnitude as UInt64.
        var rest = value < 0 ? UInt64(bitPattern: 0 &- value) : UInt64(value)
        var digits: [UInt8] = []
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        append(contentsOf: digits.reversed())
    }
}

/// SHA-256 of files: what the board records for an artifact, and what a host checks again before `dlopen`.
public enum FileDigest {
    /// SHA-256 (hex) of a file's content; nil when it cannot be read.
    public static func sha256(ofFile path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        } catch { return nil }
        return hasher.finalize().hex
    }
}
