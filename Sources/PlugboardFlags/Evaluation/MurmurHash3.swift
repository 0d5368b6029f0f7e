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
        var hasher = Streaming(seed: seed)
        hasher.add(groupId.utf8)
        hasher.add(CollectionOfOne(UInt8(ascii: ":")))
        hasher.add(identifier.utf8)
        return hasher.finish() % modulus + 1
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
        private static func mix(_ k: UInt32) -> UInt32 {
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
