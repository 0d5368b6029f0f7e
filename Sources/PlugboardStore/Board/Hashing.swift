import Crypto
import Foundation

extension SHA256.Digest {
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
    static func hex(_ data: Data) -> String { hash(data: data).hex }
}
