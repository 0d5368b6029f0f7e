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

    /// The hash state after `"\(groupId):"`, computed once so that bucketing an identifier hashes only the
    /// identifier's bytes (``normalizedValue(prefix:identifier:modulus:)``).
    struct Prefix: Sendable {
        fileprivate var h1: UInt32
        /// The bytes after the last whole block, in the low bits.
        fileprivate var tail: UInt32
        fileprivate var tailCount: Int
        fileprivate var length: Int

        init(groupId: String, seed: UInt32) {
            var hasher = Streaming(seed: seed)
            hasher.add(groupId.utf8)
            hasher.add(CollectionOfOne(UInt8(ascii: ":")))
            (h1, tail, tailCount, length) = hasher.state
        }
    }

    /// ``normalizedValue(groupId:identifier:modulus:seed:)`` with the group id's part hashed ahead.
    @inline(__always)
    static func normalizedValue(prefix: Prefix, identifier: String, modulus: UInt32 = 100) -> UInt32 {
        if let hash = identifier.utf8.withContiguousStorageIfAvailable({ hash(continuing: prefix, UnsafeRawBufferPointer($0)) }) {
            return hash % modulus + 1
        }
        return Array(identifier.utf8).withUnsafeBytes { hash(continuing: prefix, $0) } % modulus + 1
    }

    /// ``normalizedValue(prefix:identifier:modulus:)`` of an identifier given as its UTF-8.
    @inline(__always)
    static func normalizedValue(prefix: Prefix, utf8 identifier: UnsafeBufferPointer<UInt8>, modulus: UInt32 = 100) -> UInt32 {
        hash(continuing: prefix, UnsafeRawBufferPointer(identifier)) % modulus + 1
    }

    /// The hash of the prefix's bytes followed by `bytes`.
    static func hash(continuing prefix: Prefix, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var h1 = prefix.h1
        var block = prefix.tail
        var pending = prefix.tailCount
        let count = bytes.count
        let length = UInt32(truncatingIfNeeded: prefix.length + count)
        @inline(__always) func mixBlock(_ k: UInt32) {
            h1 ^= Streaming.mix(k)
            h1 = (h1 << 13) | (h1 >> 19)
            h1 = h1 &* 5 &+ 0xe654_6b64
        }
        guard let base = bytes.baseAddress, count > 0 else {
            if pending > 0 { h1 ^= Streaming.mix(block) }
            return Streaming.finalize(h1, length: length)
        }
        /// `n` (1…3) bytes from `at`, little-endian, in the low bits.
        @inline(__always) func partial(_ at: Int, _ n: Int) -> UInt32 {
            var value = UInt32(base.load(fromByteOffset: at, as: UInt8.self))
            if n > 1 { value |= UInt32(base.load(fromByteOffset: at + 1, as: UInt8.self)) << 8 }
            if n > 2 { value |= UInt32(base.load(fromByteOffset: at + 2, as: UInt8.self)) << 16 }
            return value
        }
        var index = 0
        // Complete the prefix's partial block, then whole blocks, then the rest.
        if pending > 0 {
            let taken = min(4 - pending, count)
            block |= partial(0, taken) << (8 * UInt32(pending))
            pending += taken
            index = taken
            if pending == 4 {
                mixBlock(block)
                block = 0
                pending = 0
            }
        }
        if pending == 0 {
            while index + 4 <= count {
                mixBlock(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt32.self)))
                index += 4
            }
            if index < count {
                block = partial(index, count - index)
                pending = count - index
            }
        }
        if pending > 0 { h1 ^= Streaming.mix(block) }
        return Streaming.finalize(h1, length: length)
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

        /// The running hash, the partial block, its byte count and the total length so far.
        var state: (UInt32, UInt32, Int, Int) { (h1, block, pending, Int(length)) }

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
