import PlugboardPluginAPI
import Synchronization

/// The versions of the plug-ins a host runs, as flag context: the property `plugin.ID.version` holds the version of
/// plug-in `ID` while the host runs it, and is absent otherwise.
///
/// A flag constraint on it (`plugin.com.example.checkout.version` `SEMVER_GT` `2.0.0`) makes a flag follow the code: a
/// feature that needs a new release is on for exactly the hosts that run it, through a staged rollout and its abort,
/// without a second change. Hosts fill it in; SDKs that read `plugboard serve` know no plug-in and never match it.
final class RunningReleases: Sendable {
    /// The property for plug-in `id`.
    static func property(_ id: String) -> String { "plugin.\(id).version" }

    private let state = Mutex<(revision: Int, properties: [String: String])>((0, [:]))

    /// Replaces what runs.
    func update(_ active: [PluginHost.ActivePlugin]) {
        let properties = Dictionary(active.map { (Self.property($0.pluginID), $0.version) }) { first, _ in first }
        state.withLock { state in
            guard state.properties != properties else { return }
            state = (state.revision + 1, properties)
        }
    }

    /// The properties now, and their revision (which changes whenever they do).
    var current: (revision: Int, properties: [String: String]) { state.withLock { $0 } }
}

/// A host's flag evaluation with the versions it runs in the context (``RunningReleases``), bound again whenever they
/// change; a per-call context still overrides every field.
struct RunningVersionFlags: FlagEvaluating {
    let inner: any FlagEvaluating
    let releases: RunningReleases
    private let bound: Bound

    /// The evaluation bound to one revision of the running versions.
    private final class Bound: Sendable {
        let cache = Mutex<(revision: Int, flags: any FlagEvaluating)?>(nil)
    }

    init(inner: any FlagEvaluating, releases: RunningReleases) {
        self.inner = inner
        self.releases = releases
        bound = Bound()
    }

    /// The inner evaluation with the running versions merged into its context.
    private var flags: any FlagEvaluating {
        let (revision, properties) = releases.current
        if let cached = bound.cache.withLock({ $0 }), cached.revision == revision { return cached.flags }
        let flags = properties.isEmpty ? inner : inner.with(context: properties)
        bound.cache.withLock { $0 = (revision, flags) }
        return flags
    }

    func bool(_ flag: String, default value: Bool, context: [String: String]) -> FlagResolution<Bool> {
        flags.bool(flag, default: value, context: context)
    }

    func string(_ flag: String, default value: String, context: [String: String]) -> FlagResolution<String> {
        flags.string(flag, default: value, context: context)
    }

    func int(_ flag: String, default value: Int, context: [String: String]) -> FlagResolution<Int> {
        flags.int(flag, default: value, context: context)
    }

    func double(_ flag: String, default value: Double, context: [String: String]) -> FlagResolution<Double> {
        flags.double(flag, default: value, context: context)
    }

    func with(context: [String: String]) -> any FlagEvaluating {
        RunningVersionFlags(inner: inner.with(context: context), releases: releases)
    }
}
