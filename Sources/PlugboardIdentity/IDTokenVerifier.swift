import Foundation
import JWTKit

/// The standard claims of an ID token, decoded by jwt-kit once the signature holds. Every check is ours (see
/// ``IDTokenVerifier``): `verify(using:)` accepts, so that each refusal gets its own sentence.
struct IDTokenClaims: JWTPayload {
    var iss: String
    var sub: String
    var aud: AudienceClaim
    var exp: Double
    var iat: Double
    var nbf: Double?
    var nonce: String?
    var azp: String?
    var authTime: Double?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nbf, nonce, azp
        case authTime = "auth_time"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Checks an ID token completely: the header ourselves, the signature with jwt-kit over one key, the claims ourselves.
///
/// The algorithm must be one of ``allowed`` (never `none`, never a shared-secret HS* algorithm); the header must
/// name a key (`kid`) that the provider publishes, of the type the algorithm needs; each verification builds a
/// one-key `JWTKeyCollection`, so that jwt-kit can neither fall back to a default key nor pick the algorithm itself.
struct IDTokenVerifier: Sendable {
    /// The accepted algorithms and the key type each needs.
    static let allowed: [String: JWK.KeyType] = ["RS256": .rsa, "PS256": .rsa, "ES256": .ecdsa, "ES384": .ecdsa, "EdDSA": .octetKeyPair]

    var issuer: String
    var clientID: String
    var clockSkew: TimeInterval
    var nameClaim: String
    var groupsClaim: String?

    /// What a verified token says, and whether it carried the groups claim.
    struct Outcome: Sendable {
        var identity: VerifiedIdentity
        var groupsInToken: Bool
    }

    /// The token checked, or the sentence why not. `key` finds the provider's key of a `kid` (refetching the JWKS
    /// when its rules allow) and throws when there is none.
    func verify(
        _ token: String, expectedNonce: String, maxAge: TimeInterval?, now: Date,
        key: (String) async throws(IdentityError) -> JWK
    ) async throws(IdentityError) -> Outcome {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 5 { throw Self.refused("is encrypted (JWE), which Plugboard does not accept for ID tokens") }
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            let payloadData = Base64URL.decode(parts[1]),
            let payload = (try? JSONSerialization.jsonObject(with: payloadData)) as? [String: Any]
        else { throw Self.refused("is not a signed JWT") }
        guard let alg = header["alg"] as? String else { throw Self.refused("names no algorithm") }
        if alg.lowercased() == "none" { throw Self.refused("is signed with alg none, which Plugboard refuses") }
        if alg.uppercased().hasPrefix("HS") {
            throw Self.refused(
                "is signed with \(IdentityError.quoted(alg)), a shared-secret algorithm, which Plugboard refuses for ID tokens")
        }
        guard let keyType = Self.allowed[alg] else {
            throw Self.refused(
                "is signed with \(IdentityError.quoted(alg)), which is not among the algorithms Plugboard accepts (RS256, PS256, ES256, ES384, EdDSA)"
            )
        }
        if header["crit"] != nil { throw Self.refused("has critical header parameters (crit), which Plugboard does not understand") }
        guard let kid = header["kid"] as? String, !kid.isEmpty else {
            throw Self.refused("names no signing key (kid), which Plugboard requires")
        }
        var jwk = try await key(kid)
        try Self.check(jwk, kid: kid, alg: alg, keyType: keyType)
        jwk.algorithm = JWK.Algorithm(rawValue: alg)
        let claims: IDTokenClaims
        do {
            let keys = JWTKeyCollection()
            try await keys.add(jwk: jwk, isDefault: true)
            claims = try await keys.verify(token, as: IDTokenClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw Self.refused("has a signature that does not verify with the provider's key \(IdentityError.quoted(kid))")
        } catch is DecodingError {
            throw Self.refused("lacks a required claim (iss, sub, aud, exp, iat) or has one of the wrong type")
        } catch {
            throw Self.refused("could not be verified with the provider's key \(IdentityError.quoted(kid))")
        }
        try checkClaims(claims, expectedNonce: expectedNonce, maxAge: maxAge, now: now)
        let read = try ClaimReader(nameClaim: nameClaim, groupsClaim: groupsClaim).read(payload, source: "ID token")
        return Outcome(
            identity: VerifiedIdentity(
                issuer: claims.iss, subject: claims.sub, name: read.name, email: read.email, groups: read.groups ?? [],
                authTime: claims.authTime.map { Date(timeIntervalSince1970: $0) }),
            groupsInToken: read.groups != nil)
    }

    private static func check(_ jwk: JWK, kid: String, alg: String, keyType: JWK.KeyType) throws(IdentityError) {
        guard jwk.keyType == keyType else {
            throw refused("says \(alg), but the provider's key \(IdentityError.quoted(kid)) is of type \(jwk.keyType.rawValue)")
        }
        if let keyAlg = jwk.algorithm, keyAlg.rawValue != alg {
            throw refused(
                "says \(alg), but the provider's key \(IdentityError.quoted(kid)) is for \(IdentityError.quoted(keyAlg.rawValue))")
        }
        let curve = jwk.curve?.rawValue
        let fits =
            switch alg {
            case "ES256": curve == "P-256"
            case "ES384": curve == "P-384"
            case "EdDSA": curve == "Ed25519"
            default: true
            }
        guard fits else {
            throw refused(
                "says \(alg), but the provider's key \(IdentityError.quoted(kid)) is on curve \(IdentityError.quoted(curve ?? "none"))")
        }
    }

    private func checkClaims(_ claims: IDTokenClaims, expectedNonce: String, maxAge: TimeInterval?, now: Date) throws(IdentityError) {
        guard claims.iss == issuer else {
            throw Self.refused(
                "was issued by \(IdentityError.quoted(claims.iss, limit: 200)), not by the configured issuer \(IdentityError.quoted(issuer, limit: 200))"
            )
        }
        let audiences = claims.aud.value
        guard audiences.contains(clientID) else {
            throw Self.refused(
                "is meant for \(audiences.prefix(3).map { IdentityError.quoted($0) }.joined(separator: ", ")), not for this client")
        }
        if audiences.count > 1, claims.azp != clientID {
            throw Self.refused("names other audiences besides this client, and its authorized party (azp) is not this client")
        }
        if let azp = claims.azp, azp != clientID {
            throw Self.refused("was obtained by \(IdentityError.quoted(azp)) (azp), not by this client")
        }
        let time = now.timeIntervalSince1970
        guard time <= claims.exp + clockSkew else {
            throw Self.refused("expired at \(Self.iso(claims.exp))")
        }
        if let nbf = claims.nbf, nbf > time + clockSkew {
            throw Self.refused("is not valid before \(Self.iso(nbf))")
        }
        guard claims.iat <= time + clockSkew else {
            throw Self.refused("was issued in the future (\(Self.iso(claims.iat))); check the clocks of this machine and the provider")
        }
        guard let nonce = claims.nonce else { throw Self.refused("carries no nonce, so it cannot be tied to this sign-in") }
        guard ConstantTime.equal(nonce, expectedNonce) else { throw Self.refused("carries a nonce that is not this sign-in's") }
        if let maxAge {
            guard let authTime = claims.authTime else {
                throw Self.refused("does not say when the person signed in (auth_time), which a fresh sign-in requires")
            }
            guard authTime + maxAge + clockSkew >= time else {
                throw Self.refused("is from a sign-in at \(Self.iso(authTime)), older than the \(Int(maxAge)) s asked for")
            }
        }
        guard !claims.sub.isEmpty, claims.sub.count <= IdentityLimits.subject else {
            throw Self.refused("has a subject (sub) that is empty or longer than \(IdentityLimits.subject) characters")
        }
    }

    static func refused(_ what: String) -> IdentityError {
        IdentityError(.tokenRejected, "the identity provider's token " + what)
    }

    static func iso(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds).formatted(.iso8601)
    }
}

/// Reads the name, e-mail address and groups a provider sent (in the ID token or from userinfo), within bounds.
struct ClaimReader {
    var nameClaim: String
    var groupsClaim: String?

    struct Read {
        var name: String?
        var email: String?
        var groups: [String]?
    }

    func read(_ claims: [String: Any], source: String) throws(IdentityError) -> Read {
        let code: IdentityError.Code = source == "ID token" ? .tokenRejected : .userinfoRejected
        let email = (claims["email"] as? String).flatMap { $0.isEmpty || $0.count > IdentityLimits.email ? nil : $0 }
        let named = (claims[nameClaim] as? String).flatMap { $0.isEmpty || $0.count > IdentityLimits.name ? nil : $0 }
        let name = named ?? email.flatMap { $0.count > IdentityLimits.name ? nil : $0 }
        var groups: [String]?
        if let groupsClaim, let value = claims[groupsClaim] {
            let list: [String]
            if let one = value as? String {
                list = [one]
            } else if let many = value as? [Any], let strings = many as? [String] {
                list = strings
            } else {
                throw IdentityError(
                    code, "the identity provider's \(source) has a \(IdentityError.quoted(groupsClaim)) claim that is not a list of names")
            }
            guard list.count <= IdentityLimits.groups else {
                throw IdentityError(
                    code, "the identity provider's \(source) lists \(list.count) groups; Plugboard reads at most \(IdentityLimits.groups)")
            }
            guard list.allSatisfy({ !$0.isEmpty && $0.count <= IdentityLimits.group }) else {
                throw IdentityError(
                    code,
                    "the identity provider's \(source) lists a group name that is empty or longer than \(IdentityLimits.group) characters")
            }
            groups = list
        }
        return Read(name: name, email: email, groups: groups)
    }
}
