import PlugboardModel

extension PluginHost {
    /// Whether this host can load `id@version` now, or why not: the board's rows for it must be the ones its audit
    /// log recorded; under the `require` signature policy a trusted, unrevoked key must have signed exactly this
    /// release (id, version, manifest, artifact); and the host needs its implementation (compiled in, or an artifact
    /// whose SHA-256 still matches the digest recorded and signed). All of it before any of the plug-in's code loads.
    static func availability(
        of id: String, _ version: RegistrySnapshot.Version, compiled: [String: [String]], loaded: [String: String],
        check: () throws(BoardError) -> ReleaseCheck, artifact: (String) -> Result<String, MissingArtifact>, environment: String,
        policy: SignaturePolicy
    ) -> SkipReason? {
        // Only rows the audit log recorded: an edit behind the CLI's back (a revived kill switch, another
        // artifact digest) keeps the release from loading, and unloads it if it runs.
        let checked: ReleaseCheck
        do { checked = try check() } catch {
            return SkipReason(
                .unprovenState, "cannot check the board's rows for \(id)@\(version.version) against its audit log: \(error.message)")
        }
        if let problem = checked.stateProblem {
            return SkipReason(.unprovenState, "\(problem); run plugboard audit verify")
        }
        // Signatures: the board's rows are proven above (signer, revocation and signature rows included), so trust
        // comes only from audited rows.
        let signed = policy == .off ? nil : checked.signature
        if policy == .require, let verdict = signed, let reason = SkipReason(verdict, policy: policy, environment: environment) {
            return reason
        }
        if let compiledVersions = compiled[id], !compiledVersions.isEmpty {
            if compiledVersions.contains(version.version) { return nil }
            let has = compiledVersions.joined(separator: ", ")
            let pin = compiledVersions.count == 1 ? has : "one of them"
            return SkipReason(
                .noImplementation,
                "the board selects \(id)@\(version.version) but this host has \(has) compiled in; pin \(pin) or ship a host with \(version.version)"
            )
        }
        guard let sha = version.artifactSHA256 else {
            return SkipReason(
                .noImplementation, "\(id)@\(version.version) is not compiled into this host and has no artifact on the board")
        }
        if let loadedVersion = loaded[id] {
            return loadedVersion == version.version
                ? nil
                : SkipReason(
                    .restartRequired,
                    "\(id)@\(loadedVersion) is already loaded as a library; restart the host to load \(version.version)")
        }
        let path: String
        switch artifact(sha) {
        case .success(let found): path = found
        case .failure(let missing): return SkipReason(.loadFailed, "the artifact of \(id)@\(version.version) \(missing.why)")
        }
        guard let actual = FileDigest.sha256(ofFile: path) else {
            return SkipReason(.loadFailed, "the artifact of \(id)@\(version.version) is missing from the artifact store")
        }
        if actual != sha, signed?.state == .valid {
            return SkipReason(
                .modifiedAfterSigning,
                "the library of \(id)@\(version.version) on disk was modified after signing (SHA-256 \(actual.prefix(12))…, signed \(sha.prefix(12))…); it was not loaded"
            )
        }
        return actual == sha
            ? nil
            : SkipReason(
                .digestMismatch,
                "the artifact of \(id)@\(version.version) changed after registration (SHA-256 \(actual.prefix(12))…, registered \(sha.prefix(12))…); it was not loaded"
            )
    }
}

/// Why an artifact is not on this machine: completes "the artifact of ID@VERSION …".
struct MissingArtifact: Error {
    let why: String
}
