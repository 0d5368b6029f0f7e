public import Foundation
public import Logging
public import PlugboardFlags
public import PlugboardModel
public import PlugboardPluginAPI
import Synchronization

/// Flags from the board: an immutable compiled snapshot of the host's environment, rebuilt when the host
/// notices a board change (``refresh()``). Evaluation never touches SQLite and never blocks on a rebuild.
///
/// The host's identity is the default evaluation context: its id is the `userId` (so a `flexibleRollout` with
/// default stickiness rolls a gate out to a stable percentage of *hosts*) and the `hostId` property, its
/// environment is `environment`, its properties are properties. A plug-in's per-call context overrides these
/// (`userId`, `sessionId`, `remoteAddress`, `appName`, `environment`, `currentTime`; any other key is a property).
///
/// A host reading a served board gets the same provider over the flags its snapshots carry
/// (``init(environment:hostname:logger:features:version:)``); a host of the board file gets one with `init(board:environment:)` from `PlugboardFileHost`.
public final class BoardFlagProvider: HostFlagProvider {
    private let sourceVersion: (@Sendable () throws -> BoardVersion)?
    private let read: @Sendable () throws -> FeatureSet
    private let environment: String
    private let snapshots = FlagSnapshotProvider()
    private let evaluationEnvironment: EvaluationEnvironment
    private let logger: Logger
    /// The board's version when the snapshot in use was read.
    private let loadedVersion = Mutex<BoardVersion?>(nil)

    /// Compiles the flags `features` returns, on every ``refresh()`` (a served board's source hands over the flags of
    /// its latest snapshot; the host refreshes after each snapshot it reads). Until a refresh succeeds, evaluations
    /// return their defaults with `PROVIDER_NOT_READY`.
    ///
    /// - Parameters:
    ///   - environment: The environment whose flags these are (named in log messages).
    ///   - hostname: The host name that the `applicationHostname` strategy compares with.
    ///   - logger: Where a failed refresh is logged.
    ///   - features: Reads the flags to compile.
    ///   - version: The version of what `features` reads, when it can be had cheaply (the board file's):
    ///     ``refreshIfChanged()`` then recompiles only when it moved. Nil recompiles on every refresh.
    public init(
        environment: String, hostname: String? = ProcessInfo.processInfo.hostName, logger: Logger = Logger(label: "plugboard.flags"),
        features: @escaping @Sendable () throws -> FeatureSet, version: (@Sendable () throws -> BoardVersion)? = nil
    ) {
        self.sourceVersion = version
        self.read = features
        self.environment = environment
        evaluationEnvironment = EvaluationEnvironment(hostname: hostname)
        self.logger = logger
    }

    /// The snapshot in use.
    public var snapshot: FlagSnapshot { snapshots.currentSnapshot }

    /// The underlying provider, for apps that use the typed flag API directly (OpenFeature-style details).
    public var resolver: FlagSnapshotProvider { snapshots }

    /// Re-reads and recompiles the environment's flags; on failure the previous snapshot stays in use.
    public func refresh() {
        do {
            let version = try sourceVersion?()
            let set = try read()
            snapshots.replace(with: try FlagSnapshot(set, mode: .strict, environment: evaluationEnvironment))
            loadedVersion.withLock { $0 = version }
        } catch {
            logger.warning("keeping the previous flags: cannot load the flags of \(environment) from the board: \(error)")
        }
    }

    /// Reloads only if the board changed since the snapshot was read (the board file's version, a cheap read).
    ///
    /// - Returns: Whether a reload happened.
    @discardableResult
    public func refreshIfChanged() -> Bool {
        guard let sourceVersion else {
            refresh()
            return true
        }
        guard let current = try? sourceVersion(), current != loadedVersion.withLock({ $0 }) else { return false }
        refresh()
        return true
    }

    /// Polls the source every `interval` and reloads when it changed, until the returned task is cancelled.
    /// A host does not need this: it refreshes its flags whenever it notices a board change.
    public func watch(every interval: Duration = .milliseconds(100)) -> Task<Void, Never> {
        Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                self.refreshIfChanged()
            }
        }
    }

    public func evaluator(for host: HostIdentity) -> any FlagEvaluating {
        HostBoundFlags(
            resolver: snapshots,
            base: UnleashContext(
                userId: host.hostID, environment: host.environment,
                properties: host.properties.merging(["hostId": host.hostID]) { current, _ in current }))
    }
}

/// Adapts the evaluator's OpenFeature-style results to the plug-in API's types, with the host's context.
struct HostBoundFlags: FlagEvaluating {
    let resolver: any FlagResolver
    let base: UnleashContext

    func context(_ overrides: [String: String]) -> UnleashContext {
        var context = base
        for (key, value) in overrides { context.set(key, to: value) }
        return context
    }

    /// The per-call fields are read before the host's (no merged copy is made).
    func bool(_ flag: String, default value: Bool, context: [String: String]) -> FlagResolution<Bool> {
        Self.convert(resolver.bool(flag, default: value, context: base, overrides: context))
    }

    /// The fields merged into the host's context once, for every later call.
    func with(context: [String: String]) -> any FlagEvaluating {
        HostBoundFlags(resolver: resolver, base: self.context(context))
    }

    func string(_ flag: String, default value: String, context: [String: String]) -> FlagResolution<String> {
        Self.convert(resolver.string(flag, default: value, context: self.context(context)))
    }

    func int(_ flag: String, default value: Int, context: [String: String]) -> FlagResolution<Int> {
        Self.convert(resolver.int(flag, default: value, context: self.context(context)))
    }

    func double(_ flag: String, default value: Double, context: [String: String]) -> FlagResolution<Double> {
        Self.convert(resolver.double(flag, default: value, context: self.context(context)))
    }

    static func convert<T>(_ details: ResolutionDetails<T>) -> FlagResolution<T> {
        FlagResolution(
            value: details.value, variant: details.variant,
            reason: FlagReason(details.reason), errorCode: details.errorCode.map(FlagErrorCode.init),
            errorMessage: details.errorMessage)
    }
}

extension FlagReason {
    /// The plug-in API's name for the evaluator's reason.
    init(_ reason: ResolutionReason) {
        switch reason {
        case .static: self = .static
        case .default: self = .default
        case .targetingMatch: self = .targetingMatch
        case .split: self = .split
        case .disabled: self = .disabled
        case .error: self = .error
        }
    }
}

extension FlagErrorCode {
    /// The plug-in API's name for the evaluator's error code.
    init(_ code: ResolutionErrorCode) {
        switch code {
        case .providerNotReady: self = .providerNotReady
        case .flagNotFound: self = .flagNotFound
        case .parseError: self = .parseError
        case .typeMismatch: self = .typeMismatch
        case .targetingKeyMissing: self = .targetingKeyMissing
        case .invalidContext: self = .invalidContext
        case .general: self = .general
        }
    }
}
