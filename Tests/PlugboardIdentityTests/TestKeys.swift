import Crypto
import CryptoExtras
import Foundation
import JWTKit

/// The claims the fake provider signs; every field can be left out or set wrong by a test.
struct TestClaims: JWTPayload {
    var iss: String
    var sub: String
    var aud: [String]
    var exp: Double
    var iat: Double
    var nbf: Double?
    var nonce: String?
    var azp: String?
    var authTime: Double?
    var preferredUsername: String?
    var email: String?
    var groups: [String]?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nbf, nonce, azp, email, groups
        case authTime = "auth_time"
        case preferredUsername = "preferred_username"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

func base64URL(_ data: some DataProtocol) -> String {
    Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// A provider's signing keys: RSA, P-256 and Ed25519 private keys, and the JWKS that publishes their public halves.
struct SigningKeys: Sendable {
    let rsa: JWTKit.Insecure.RSA.PrivateKey
    let ec: ES256PrivateKey
    let ed: EdDSA.PrivateKey
    let signers: JWTKeyCollection
    /// The kids of the RSA, EC and Ed25519 keys.
    let kids: (rsa: String, ec: String, ed: String)

    init(prefix: String = "k") async throws {
        rsa = try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        ec = ES256PrivateKey()
        ed = try EdDSA.PrivateKey(curve: .ed25519)
        kids = ("\(prefix)-rsa", "\(prefix)-ec", "\(prefix)-ed")
        signers = JWTKeyCollection()
        await signers.add(rsa: rsa, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kids.rsa))
        await signers.add(ecdsa: ec, kid: JWKIdentifier(string: kids.ec))
        await signers.add(eddsa: ed, kid: JWKIdentifier(string: kids.ed))
    }

    /// The public keys as JWKs; the RSA one without `alg`, as many providers publish it.
    func publicKeys() throws -> [JWK] {
        let (n, e) = try rsa.publicKey.getKeyPrimitives()
        return [
            .rsa(nil, identifier: JWKIdentifier(string: kids.rsa), modulus: base64URL(n), exponent: base64URL(e)),
            .ecdsa(
                .es256, identifier: JWKIdentifier(string: kids.ec), x: ec.publicKey.parameters!.x, y: ec.publicKey.parameters!.y,
                curve: .p256),
            .octetKeyPair(
                .eddsa, identifier: JWKIdentifier(string: kids.ed), x: base64URL(ed.publicKey.rawRepresentation), y: nil, curve: .ed25519),
        ]
    }

    /// `claims` signed with the key of `kid` (RS256, ES256 or EdDSA by the key).
    func sign(_ claims: TestClaims, kid: String? = nil) async throws -> String {
        try await signers.sign(claims, kid: JWKIdentifier(string: kid ?? kids.rsa))
    }

    /// `claims` signed with HS256, the RSA public key's PEM as the shared secret (the classic key-confusion attack).
    func signHS256WithPublicKey(_ claims: TestClaims) async throws -> String {
        let hmac = JWTKeyCollection()
        await hmac.add(hmac: HMACKey(from: rsa.publicKey.pemRepresentation), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kids.rsa))
        return try await hmac.sign(claims, kid: JWKIdentifier(string: kids.rsa))
    }
}

/// A token with the header `header` and the payload of `claims`, signed with nothing (`alg: none`).
func unsignedToken(_ claims: TestClaims, header: String) throws -> String {
    base64URL(Data(header.utf8)) + "." + base64URL(try JSONEncoder().encode(claims)) + "."
}

func publishedJWKS(_ keys: [JWK]) throws -> String {
    String(decoding: try JSONEncoder().encode(JWKS(keys: keys)), as: UTF8.self)
}
