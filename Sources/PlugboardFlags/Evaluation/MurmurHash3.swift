/// MurmurHash3, x86 32-bit variant — the hash every Unleash SDK buckets users with.
///
/// Strings are hashed as their UTF-8 bytes. ``hash(_:seed:)`` hashes one string; ``normalizedValue(groupId:identifier:modulus:seed:)``
/// computes Unleash's bucket `murmur3("group:identifier", seed) % modulus + 1` without building the joined string.
public enum MurmurHash3 {
    /// Unleash's seed for variant bucketing.
    public static let variantSeed: UInt32 = 86_028_157

    /// The 32-bit MurmurHash3 (x86) of `text`'s UTF-8 bytes.
    public static func hash(_ text: String, seed: UInt32 = 0) -> UInt32 {
        var hasher = Streaming(seed: seed)
        hasher.add(text.utf8)
        return hasher.finish()
    }

    /// The 32-bit MurmurHash3 (x86) of `bytes`.
    public static func hash(bytes: some Sequence<UInt8>, seed: UInt32 = 0) -> UInt32 {
        var hasher = Streaming(seed: seed)
        hasher.add(bytes)
        return hasher.finish()
    }

    /// Unleash's normalized bucket: `murmur3("\(groupId):\(identifier)", seed) % modulus + 1`, in `1...modulus`.
    ///
    /// With `modulus` 100 and seed 0 this is the percentage bucket of rollouts; with the total variant weight
    /// and ``variantSeed`` it picks a variant.
    public static func normalizedValue(groupId: String, identifier: String, modulus: UInt32 = 100, seed: UInt32 = 0) -> UInt32 {
        precondition(modulus > 0, "modulus must be positive")
        return joinedHash(groupId, identifier, seed: seed) % modulus + 1
    }

    /// The hash of `"\(first):\(second)"`: both strings are copied into one stack buffer and hashed four bytes at a
    /// time (no heap allocation); very long strings are streamed instead.
    static func joinedHash(_ first: String, _ second: String, seed: UInt32) -> UInt32 {
        let firstCount = first.utf8.count
        let total = firstCount + 1 + second.utf8.count
        guard total <= 1024 else {
            var hasher = Streaming(seed: seed)
            hasher.add(first.utf8)
            hasher.add(CollectionOfOne(UInt8(ascii: ":")))
            hasher.add(second.utf8)
            return hasher.finish()
        }
        return withUnsafeTemporaryAllocation(byteCount: total, alignment: 4) { buffer in
            var first = first
            var second = second
            first.withUTF8 { bytes in
                if !bytes.isEmpty { buffer.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            }
            buffer[firstCount] = UInt8(ascii: ":")
            second.withUTF8 { bytes in
                if !bytes.isEmpty {
                    (buffer.baseAddress! + firstCount + 1).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                }
            }
            return hash(UnsafeRawBufferPointer(buffer), seed: seed)
        }
    }

    /// The hash of contiguous bytes, four at a time.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt32) -> UInt32 {
        var h1 = seed
        let blocks = bytes.count / 4
        for block in 0..<blocks {
            let k = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: block * 4, as: UInt32.self))
            h1 ^= Streaming.mix(k)
            h1 = (h1 << 13) | (h1 >> 19)
            h1 = h1 &* 5 &+ 0xe654_6b64
        }
        var tail: UInt32 = 0
        let rest = bytes.count & 3
        for offset in 0..<rest { tail |= UInt32(bytes[blocks * 4 + offset]) << (8 * UInt32(offset)) }
        if rest > 0 { h1 ^= Streaming.mix(tail) }
        return Streaming.finalize(h1, length: UInt32(truncatingIfNeeded: bytes.count))
    }

    /// An incremental hasher: feed bytes in pieces, then ``finish()``.
    struct Streaming {
        private var h1: UInt32
        private var block: UInt32 = 0
        private var pending = 0
        private var length: UInt32 = 0
        private static let c1: UInt32 = 0xcc9e_2d51
        private static let c2: UInt32 = 0x1b87_3593

        init(seed: UInt32) { h1 = seed }

        @inline(__always)
        static func mix(_ k: UInt32) -> UInt32 {
            var k = k &* c1
            k = (k << 15) | (k >> 17)
            return k &* c2
        }

        mutating func add(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                block |= UInt32(byte) << (8 * UInt32(pending))
                pending += 1
                length &+= 1
                if pending == 4 {
                    h1 ^= Self.mix(block)
                    h1 = (h1 << 13) | (h1 >> 19)
                    h1 = h1 &* 5 &+ 0xe654_6b64
                    block = 0
                    pending = 0
                }
            }
        }

        func finish() -> UInt32 {
            var h = h1
            if pending > 0 { h ^= Self.mix(block) }
            return Self.finalize(h, length: length)
        }

        @inline(__always)
        static func finalize(_ h1: UInt32, length: UInt32) -> UInt32 {
            var h = h1
            h ^= length
            h ^= h >> 16
            h = h &* 0x85eb_ca6b
            h ^= h >> 13
            h = h &* 0xc2b2_ae35
            h ^= h >> 16
            return h
        }
    }
}
