import Crypto
import Foundation

/// Base64url without padding (RFC 4648 §5), as JOSE and PKCE write it.
enum Base64URL {
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: some StringProtocol) -> Data? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var padded = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded)
    }

    /// `count` random bytes from the system's generator, encoded.
    static func random(bytes count: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return encode((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}

/// Comparisons whose time does not depend on where two secrets differ: both sides are hashed first, so lengths leak
/// nothing either.
enum ConstantTime {
    static func equal(_ a: String, _ b: String) -> Bool {
        let left = Array(SHA256.hash(data: Data(a.utf8)))
        let right = Array(SHA256.hash(data: Data(b.utf8)))
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}

/// The PKCE S256 challenge of a verifier (RFC 7636 §4.2).
func codeChallenge(of verifier: String) -> String {
    Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
}
