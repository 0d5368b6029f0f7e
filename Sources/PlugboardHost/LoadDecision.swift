public import PlugboardModel

/// Why a plug-in was not loaded (or stopped), as a stable code and a readable sentence.
public struct SkipReason: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kinds of reasons. Codes are stable: they are written to the board's load reports.
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        /// Not enabled in the host's environment.
        case disabled
        /// A kill switch covers the plug-in, its version, or all plug-ins.
        case killed
        /// Every version is yanked (or killed).
        case yanked
        /// No version works with this host's API version.
        case incompatibleHost = "incompatible_host"
        /// The pinned version is not registered.
        case pinnedVersionMissing = "pinned_version_missing"
        /// A dependency is not registered on the board.
        case missingDependency = "missing_dependency"
        /// A dependency resolves, but to a version outside the required range.
        case incompatibleDependency = "incompatible_dependency"
        /// A dependency is registered but not loaded (itself skipped or failed).
        case dependencyNotLoaded = "dependency_not_loaded"
        /// The plug-in is part of a dependency cycle.
        case dependencyCycle = "dependency_cycle"
        /// The gate flag evaluated to off for this host.
        case gateOff = "gate_off"
        /// The artifact's SHA-256 differs from the digest recorded at registration.
        case digestMismatch = "digest_mismatch"
        /// The board's rows for the release differ from what its audit log recorded (edited behind the CLI's back).
        case unprovenState = "unproven_state"
        /// The environment requires signed approvals (by the board's policy, or the host's
        /// ``HostConfiguration/approvals``) and the plug-in's enablement lacks enough valid ones.
        case unapproved
        /// The environment requires signatures and the release carries none.
        case unsigned
        /// The release is signed only by keys not trusted for the plug-in.
        case untrustedSigner = "untrusted_signer"
        /// The release is signed by a key that was revoked (revocation covers what the key signed before).
        case revokedSigner = "revoked_signer"
        /// The manifest or the artifact differs from what was signed: modified after signing (in the board's rows,
        /// or the library on disk).
        case modifiedAfterSigning = "modified_after_signing"
        /// The signature covers another release (another version or plug-in): replayed.
        case signatureForOtherRelease = "signature_for_other_release"
        /// The stored signature does not verify with the trusted key.
        case invalidSignature = "invalid_signature"
        /// The host has neither a compiled-in factory for the selected version nor an artifact to load.
        case noImplementation = "no_implementation"
        /// The dynamic library could not be loaded or is not a compatible plug-in.
        case loadFailed = "load_failed"
        /// Creating or activating the plug-in threw.
        case activationFailed = "activation_failed"
        /// A different version of an already-loaded dynamic library is needed: restart the host.
        case restartRequired = "restart_required"
        /// The host's snapshot of a served board expired long enough ago that the host fails closed.
        case stale
        /// The host is stopping (``PluginHost/stop()``): every plug-in is deactivated, and nothing loads after it.
        case hostStopping = "host_stopping"
        /// The release crashed this host too often (``CrashQuarantine``): the host quarantined it and does not load it.
        case quarantined
        /// The host runs in safe mode (``HostConfiguration/safeMode``): it loads no plug-in at all.
        case safeMode = "safe_mode"
        /// The plug-in's rollout leaves this host no release: it has not reached the host and no release before it is
        /// live, or it was aborted. A running release the rollout no longer allows on the host stops at once.
        case rollout
        /// A compiled-in plug-in moves to another version compiled into the host: the running one is deactivated and
        /// the other activated in the same reconciliation.
        case replaced
        /// An advisory whose action in the host's environment is `refuse-new` affects the release, and this host does not
        /// run it: it refuses to load it (a host that runs it keeps it). An advisory that stops a release gives `killed`.
        case advisory
        /// The release crashed this host's previous process (reported, with its crash count, before the host enters
        /// plug-in code again).
        case crashed
    }

    /// The kind of reason.
    public let code: Code
    /// One sentence for people.
    public let message: String

    /// Creates a reason.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The reason for a signature level other than valid (nil for valid).
    public init?(_ verdict: SignatureVerdict, policy: SignaturePolicy, environment: String) {
        let code: Code
        switch verdict.state {
        case .valid: return nil
        case .unsigned: code = .unsigned
        case .untrusted: code = .untrustedSigner
        case .revoked: code = .revokedSigner
        case .modified: code = .modifiedAfterSigning
        case .otherRelease: code = .signatureForOtherRelease
        case .invalid: code = .invalidSignature
        }
        let policyText =
            policy == .require ? "\(environment) requires a valid signature by a trusted key" : "\(environment) warns about signatures"
        self.init(code, "\(verdict.message); \(policyText)")
    }
}

/// What the resolver decided for one plug-in.
public struct LoadDecision: Sendable, Hashable {
    /// The plug-in id.
    public let pluginID: String
    /// The version selected (nil when none could be).
    public let version: String?
    /// Nil when the plug-in should be loaded; otherwise why not.
    public let skip: SkipReason?
}

/// The resolver's answer: what to load, in dependency order, and what not, with reasons.
public struct Resolution: Sendable, Hashable {
    /// Plug-ins to load, dependencies before dependants (ties broken by id).
    public let load: [LoadDecision]
    /// Plug-ins not to load, sorted by id, each with its reason.
    public let skipped: [LoadDecision]

    /// The decision for one plug-in.
    public func decision(for pluginID: String) -> LoadDecision? {
        load.first { $0.pluginID == pluginID } ?? skipped.first { $0.pluginID == pluginID }
    }
}
