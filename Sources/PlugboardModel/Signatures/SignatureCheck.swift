/// Decides a release's signature level from its signatures and the board's trusted and revoked keys. Pure: the
/// host calls it before any code loads, `plugboard plugin show` to show the level.
public enum SignatureCheck {
    /// The level of the release `release` (built from the board's rows: id, version, the SHA-256 of the stored
    /// manifest, the recorded artifact digest) given the signatures it carries.
    ///
    /// A signature counts only when its key is trusted for the plug-in (or for every plug-in), is not revoked, the
    /// signature verifies with the *trusted* public key, and its statement is exactly `release`. When none counts,
    /// the most telling problem is reported: modified after signing, then a signature for another release, an altered
    /// signature, a revoked key, an untrusted key.
    public static func verdict(for release: ReleaseStatement, signatures: [ReleaseSignature], trust: SignerTrust) -> SignatureVerdict {
        guard !signatures.isEmpty else {
            return SignatureVerdict(state: .unsigned, keyIDs: [], message: "\(release.release) is not signed")
        }
        let outcomes = signatures.sorted { $0.keyID < $1.keyID }.map { classify($0, release, trust) }
        let valid = outcomes.filter { $0.state == .valid }
        if !valid.isEmpty {
            return SignatureVerdict(state: .valid, keyIDs: valid.flatMap(\.keyIDs), message: valid.map(\.message).joined(separator: "; "))
        }
        let rank: [SignatureState] = [.modified, .otherRelease, .invalid, .revoked, .untrusted]
        return outcomes.min { (rank.firstIndex(of: $0.state) ?? rank.count) < (rank.firstIndex(of: $1.state) ?? rank.count) }!
    }

    private static func classify(_ signature: ReleaseSignature, _ release: ReleaseStatement, _ trust: SignerTrust) -> SignatureVerdict {
        let key = signature.keyID
        func verdict(_ state: SignatureState, _ message: String) -> SignatureVerdict {
            SignatureVerdict(state: state, keyIDs: [key], message: message)
        }
        if let reason = trust.revoked[key] {
            return verdict(.revoked, "\(release.release) is signed by key \(key), which was revoked (\(reason))")
        }
        guard let trusted = trust.keys[key],
            trusted.plugins.contains(release.pluginID) || trusted.plugins.contains(Signer.everyPlugin)
        else {
            return verdict(
                .untrusted,
                "\(release.release) is signed by key \(key), which is not trusted for \(release.pluginID) (plugboard signer add \(release.pluginID) PUBLIC_KEY)"
            )
        }
        guard let publicKey = try? SigningKeys.publicKey(base64: trusted.publicKey), signature.verifies(with: publicKey),
            let signed = signature.release
        else {
            return verdict(
                .invalid,
                "the signature of \(release.release) by key \(key) does not verify with the trusted key: it was altered after signing")
        }
        if signed.pluginID != release.pluginID || signed.version != release.version {
            return verdict(
                .otherRelease,
                "the signature on \(release.release) by key \(key) is for \(signed.release): it was copied from another release")
        }
        if signed.manifestSHA256 != release.manifestSHA256 {
            return verdict(
                .modified,
                "the manifest of \(release.release) was modified after signing (SHA-256 \(release.manifestSHA256.prefix(12))…, signed \(signed.manifestSHA256.prefix(12))…)"
            )
        }
        if signed.artifactSHA256 != release.artifactSHA256 {
            return verdict(
                .modified,
                "the artifact of \(release.release) was modified after signing (SHA-256 \(short(release.artifactSHA256)), signed \(short(signed.artifactSHA256)))"
            )
        }
        let scope = trusted.plugins.contains(release.pluginID) ? release.pluginID : "every plug-in"
        return verdict(.valid, "signed by key \(key) (trusted for \(scope))")
    }

    private static func short(_ digest: String?) -> String {
        digest.map { "\($0.prefix(12))…" } ?? "none"
    }
}
