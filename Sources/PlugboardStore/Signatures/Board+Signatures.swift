import Crypto
import Foundation
import GRDB
package import PlugboardModel
package import PlugboardVersioning

extension Board {
    /// Stores a signature of a registered release, after checking that it verifies and covers exactly this release
    /// (its id, version, manifest and artifact as registered). Needs the plug-in's owners, maintainers or an admin;
    /// audited. A signature by a key that already signed the release is refused unless it is the same signature.
    package func addSignature(_ pluginID: String, version: SemanticVersion, _ signature: ReleaseSignature, by actor: Principal)
        throws(BoardError) -> ChangeResult
    {
        try Validate.pluginID(pluginID)
        return try change(
            actor, refusal: AuditEntry(action: .pluginSign, targetType: "plugin_version", targetID: "\(pluginID)@\(version)"),
            requiring: .pluginMaintainers(pluginID, doing: "add a signature to")
        ) { change in
            guard let versionText = try VersionLookup.registered(change.db, pluginID, version) else {
                throw BoardError.notFound("\(pluginID)@\(version) is not registered; see plugboard plugin show \(pluginID)")
            }
            let target = "\(pluginID)@\(versionText)"
            if let existing = try SignatureQueries.signatures(change.db, pluginID, versionText).first(where: { $0.keyID == signature.keyID }
            ) {
                if existing == signature {
                    return ChangeResult(
                        changed: false, "\(target) already carries this signature by key \(signature.keyID); nothing changed.")
                }
                throw BoardError.conflict(
                    "\(target) already carries a signature by key \(signature.keyID); signatures are immutable, so sign with another key if needed"
                )
            }
            try storeSignatures([signature], of: pluginID, versionText, change)
            return ChangeResult(
                changed: true, "Added the signature by key \(signature.keyID) to \(target).",
                notes: try trustNotes([signature], pluginID, change.db))
        }
    }

    /// Checks `signatures` against the release's rows and stores them with one audit row each (in `change`).
    func storeSignatures(_ signatures: [ReleaseSignature], of pluginID: String, _ version: String, _ change: AuditedChange) throws {
        guard let release = try SignatureQueries.release(change.db, pluginID, version) else {
            throw BoardError.notFound("\(pluginID)@\(version) is not registered; see plugboard plugin show \(pluginID)")
        }
        var seen: Set<String> = []
        for signature in signatures {
            guard seen.insert(signature.keyID).inserted else {
                throw BoardError.invalid("two of the signatures given are by key \(signature.keyID); give each key's signature once")
            }
            guard let signed = signature.release else {
                throw BoardError.invalid("the signature by key \(signature.keyID) does not carry a canonical release statement")
            }
            if signed.pluginID != release.pluginID || signed.version != release.version {
                throw BoardError.invalid(
                    "the signature by key \(signature.keyID) covers \(signed.release), not \(release.release); sign \(release.release) itself"
                )
            }
            if signed != release {
                let what = signed.manifestSHA256 != release.manifestSHA256 ? "manifest" : "artifact"
                throw BoardError.invalid(
                    "the signature by key \(signature.keyID) covers another \(what) than the one registered for \(release.release); sign the registered files again"
                )
            }
            guard let key = try? SigningKeys.publicKey(base64: signature.publicKey), signature.verifies(with: key) else {
                throw BoardError.invalid("the signature by key \(signature.keyID) does not verify; sign \(release.release) again")
            }
            try SignatureQueries.insertSignature(change.db, pluginID, version, signature, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .pluginSign, targetType: "plugin_version", targetID: release.release,
                    after: .object([
                        "key_id": .string(signature.keyID), "algorithm": .string(signature.algorithm),
                        "manifest_sha256": .string(release.manifestSHA256), "artifact_sha256": .optional(release.artifactSHA256),
                    ])))
        }
    }

    /// Notes for signatures by keys not (or no longer) trusted for the plug-in: stored, but no host counts them yet.
    func trustNotes(_ signatures: [ReleaseSignature], _ pluginID: String, _ db: Database) throws -> [String] {
        let trust = try SignatureQueries.trust(db)
        return signatures.compactMap { signature in
            if trust.revoked[signature.keyID] != nil { return "Key \(signature.keyID) is revoked: hosts do not count its signatures." }
            let plugins = trust.keys[signature.keyID]?.plugins ?? []
            if plugins.contains(pluginID) || plugins.contains(Signer.everyPlugin) { return nil }
            return
                "Key \(signature.keyID) is not trusted for \(pluginID) yet: hosts that require signatures count it once an owner runs plugboard signer add \(pluginID) \(signature.publicKey)."
        }
    }

    /// Trusts a publisher key for one plug-in (`pluginID`; its owners or an admin) or, with nil, for every plug-in
    /// (admins only). Audited. A revoked key cannot be trusted again: publish a new key.
    package func addSigner(pluginID: String?, publicKey: String, name: String? = nil, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        if let pluginID { try Validate.pluginID(pluginID) }
        if let name { try Validate.name(name, field: "the signer's name", limit: 200) }
        let key = try SigningKeys.publicKey(base64: publicKey)
        let raw = key.rawRepresentation
        let keyID = SigningKeys.keyID(publicKey: raw)
        let scope = pluginID ?? Signer.everyPlugin
        let access: RequiredRole =
            pluginID.map { RequiredRole.pluginOwners($0, doing: "trust signing keys for") }
            ?? RequiredRole.admin(doing: "trust a signing key for every plug-in")
        return try change(
            actor, refusal: AuditEntry(action: .signerAdd, targetType: "signer", targetID: "\(keyID)/\(scope)"), requiring: access
        ) { change in
            if let revocation = try SignatureQueries.revocation(change.db, keyID) {
                throw BoardError.conflict(
                    "key \(keyID) was revoked on \(revocation.at) by \(revocation.by) (\(revocation.reason)) and cannot be trusted again; generate a new key"
                )
            }
            let scopeText = pluginID ?? "every plug-in"
            if try !SignatureQueries.signers(change.db, keyID: keyID).filter({ $0.pluginID == scope }).isEmpty {
                return ChangeResult(changed: false, "Key \(keyID) is already trusted for \(scopeText); nothing changed.")
            }
            try SignatureQueries.insertSigner(
                change.db, keyID: keyID, pluginID: scope, publicKey: raw.base64EncodedString(), name: name, by: change.actor, at: change.now
            )
            try change.record(
                AuditEntry(
                    action: .signerAdd, targetType: "signer", targetID: "\(keyID)/\(scope)",
                    after: .object([
                        "key_id": .string(keyID), "plugin_id": .string(scope), "public_key": .string(raw.base64EncodedString()),
                        "name": .optional(name),
                    ])))
            return ChangeResult(changed: true, "Trusted key \(keyID) for \(scopeText)\(name.map { " (\($0))" } ?? "").")
        }
    }

    /// Revokes a publisher key: no signature it made counts any more, including those made before. Admins may revoke
    /// any key; the owners of every plug-in a key is trusted for may revoke it (not a key trusted for every plug-in).
    /// Audited.
    package func revokeSigner(keyID: String, reason: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try SigningKeys.validateKeyID(keyID)
        try Validate.reason(reason)
        return try change(actor, refusal: AuditEntry(action: .signerRevoke, targetType: "signer", targetID: keyID)) { change in
            let db = change.db
            let scopes = try SignatureQueries.signers(db, keyID: keyID).map(\.pluginID)
            guard try !scopes.isEmpty || SignatureQueries.hasSigned(db, keyID) else {
                throw BoardError.notFound("key \(keyID) is neither trusted nor has it signed a release; see plugboard signer list")
            }
            if try !RoleQueries.isAdmin(db, change.actor.osUser) {
                if scopes.isEmpty || scopes.contains(Signer.everyPlugin) {
                    try RequiredRole.requireAdmin(db, by: change.actor, doing: "revoke key \(keyID)")
                }
                for scope in scopes {
                    try RequiredRole.check(.pluginOwners(scope, doing: "revoke a key trusted for"), db, by: change.actor)
                }
            }
            if let revocation = try SignatureQueries.revocation(db, keyID) {
                return ChangeResult(changed: false, "Key \(keyID) was already revoked on \(revocation.at); nothing changed.")
            }
            try SignatureQueries.insertRevocation(db, keyID, reason: reason, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .signerRevoke, targetType: "signer", targetID: keyID, reason: reason,
                    after: .object(["key_id": .string(keyID), "revoked": .bool(true)])))
            return ChangeResult(
                changed: true, "Revoked key \(keyID); hosts no longer count any signature it made, including earlier ones.")
        }
    }

    /// Trusted keys (with their revocation), for one plug-in (its own and those trusted for every plug-in) or all.
    package func signers(pluginID: String? = nil) throws(BoardError) -> [Signer] {
        if let pluginID {
            try Validate.pluginID(pluginID)
            try requirePlugin(pluginID)
        }
        return try read { db in try SignatureQueries.signers(db, pluginID: pluginID) }
    }

    /// Sets an environment's signature policy (admins only; the environment is created if new). Audited.
    package func setSignaturePolicy(_ policy: SignaturePolicy, environment: String, by actor: Principal) throws(BoardError) -> ChangeResult
    {
        try Validate.environment(environment)
        return try change(
            actor, refusal: AuditEntry(action: .policySet, targetType: "environment", targetID: environment, environment: environment),
            requiring: .admin(doing: "set the signature policy of \(environment)")
        ) { change in
            let before = try SignatureQueries.policy(change.db, environment)
            if before == policy, try RegistryQueries.environmentExists(change.db, environment) {
                return ChangeResult(changed: false, "\(environment) already has signature policy \(policy.rawValue); nothing changed.")
            }
            try change.ensureEnvironment(environment)
            try SignatureQueries.savePolicy(change.db, environment, policy, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .policySet, targetType: "environment", targetID: environment, environment: environment,
                    before: .object(["signatures": .string(before.rawValue)]), after: .object(["signatures": .string(policy.rawValue)])))
            let effect =
                switch policy {
                case .off: "hosts there no longer check signatures"
                case .warn: "hosts there load unsigned releases and report the problem"
                case .require: "hosts there load only releases signed by a trusted, unrevoked key"
                }
            return ChangeResult(changed: true, "Set the signature policy of \(environment) to \(policy.rawValue): \(effect).")
        }
    }

    /// Every environment's signature policy, sorted by environment.
    package func signaturePolicies() throws(BoardError) -> [EnvironmentSignaturePolicy] {
        try read { db in try SignatureQueries.policies(db) }
    }

    /// The signature policy of one environment (`off` when none was set or the environment does not exist).
    package func signaturePolicy(environment: String) throws(BoardError) -> SignaturePolicy {
        try Validate.environment(environment)
        return try read { db in try SignatureQueries.policy(db, environment) }
    }

    /// The signature level of one registered release; nil when it is not registered.
    package func signatureVerdict(pluginID: String, version: String) throws(BoardError) -> SignatureVerdict? {
        try read { db in
            guard let release = try SignatureQueries.release(db, pluginID, version) else { return nil }
            return SignatureCheck.verdict(
                for: release, signatures: try SignatureQueries.signatures(db, pluginID, version), trust: try SignatureQueries.trust(db))
        }
    }
}
