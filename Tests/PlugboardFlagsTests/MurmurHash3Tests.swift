import PlugboardTestSupport
import Testing

@testable import PlugboardFlags

@Suite("MurmurHash3 x86 32-bit", .timeLimit(.hangGuard))
struct MurmurHash3Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let input: String
        let seed: UInt32
        let expected: UInt32
        var testDescription: String { "\"\(input)\" seed \(seed)" }
    }

    /// Published reference vectors (SMHasher / Wikipedia) plus UTF-8 inputs checked against Python's `mmh3`.
    static let vectors: [Vector] = [
        Vector(input: "", seed: 0, expected: 0),
        Vector(input: "", seed: 1, expected: 0x514E_28B7),
        Vector(input: "", seed: 0xFFFF_FFFF, expected: 0x81F1_6F39),
        Vector(input: "\0\0\0\0", seed: 0, expected: 0x2362_F9DE),
        Vector(input: "aaaa", seed: 0x9747_B28C, expected: 0x5A97_808A),
        Vector(input: "Hello, world!", seed: 0x9747_B28C, expected: 0x2488_4CBA),
        Vector(input: "Hello, world!", seed: 0, expected: 0xC036_3E43),
        Vector(input: "The quick brown fox jumps over the lazy dog", seed: 0, expected: 0x2E4F_F723),
        Vector(input: "abc", seed: 0, expected: 0xB3DD_93FA),
        Vector(input: "ü-ser", seed: 0, expected: 0x6A68_BF62),
        Vector(input: "😀", seed: 0, expected: 0xBEB4_2EFA),
    ]

    @Test(arguments: vectors)
    func referenceVector(_ vector: Vector) {
        #expect(MurmurHash3.hash(vector.input, seed: vector.seed) == vector.expected)
        #expect(MurmurHash3.hash(bytes: Array(vector.input.utf8), seed: vector.seed) == vector.expected)
    }

    @Test("Unleash's normalized values")
    func unleashNormalizedValues() {
        // Unleash's SDK test suites: normalizedValue('123', 'gr1') == 73.
        #expect(MurmurHash3.normalizedValue(groupId: "gr1", identifier: "123") == 73)
        // Yggdrasil's rollout test: user 25 is inside a 55 % rollout of this group (bucket exactly 55).
        #expect(MurmurHash3.normalizedValue(groupId: "Feature.flexibleRollout.userId.55", identifier: "25") == 55)
        // Variant bucketing uses seed 86028157 and the total weight.
        #expect(MurmurHash3.normalizedValue(groupId: "gr1", identifier: "123", modulus: 1000, seed: MurmurHash3.variantSeed) == 796)
        #expect(MurmurHash3.variantSeed == 86_028_157)
    }

    @Test("normalized values stay in 1...modulus")
    func normalizedRange() {
        for index in 0..<2000 {
            let value = MurmurHash3.normalizedValue(groupId: "g", identifier: "user-\(index)", modulus: 7)
            #expect((1...7).contains(value))
        }
    }

    @Test("a group id hashed ahead gives the same buckets, whatever the lengths and where the blocks fall")
    func prefixedBuckets() {
        let alphabet = Array("abcdé:0123456789-🙂")
        for groupLength in 0...9 {
            let group = String((0..<groupLength).map { alphabet[($0 * 7 + groupLength) % alphabet.count] })
            for seed in [0, MurmurHash3.variantSeed] {
                let prefix = MurmurHash3.Prefix(groupId: group, seed: seed)
                for idLength in 0...13 {
                    let id = String((0..<idLength).map { alphabet[($0 * 5 + idLength) % alphabet.count] })
                    for modulus: UInt32 in [100, 1000, 7] {
                        #expect(
                            MurmurHash3.normalizedValue(prefix: prefix, identifier: id, modulus: modulus)
                                == MurmurHash3.normalizedValue(groupId: group, identifier: id, modulus: modulus, seed: seed),
                            "\(group) / \(id)")
                    }
                }
            }
        }
        #expect(MurmurHash3.normalizedValue(prefix: MurmurHash3.Prefix(groupId: "gr1", seed: 0), identifier: "123") == 73)
    }
}
