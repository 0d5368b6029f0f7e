import Foundation
import Logging
import PlugboardModel
import PlugboardStore
import ServiceLifecycle
import Synchronization

/// What SDKs and remote hosts report (registrations, usage counts, load reports), aggregated in memory and written to
/// the board's telemetry file in one short transaction at a time, never to the board: a flood of telemetry never
/// holds the board's write lock, so it never delays a kill switch.
///
/// Bounded, and every drop is counted (`/metrics`, and the telemetry file for `plugboard plugin status` and
/// `plugboard clients`):
/// - usage of a flag the environment does not have is dropped;
/// - each token may name at most ``applicationsPerToken`` applications, ``instancesPerToken`` SDK instances and
///   ``hostsPerToken`` host ids per hour;
/// - at most ``limit`` distinct usage counts and registrations, and ``reportBytesLimit`` bytes of load reports, wait in
///   memory; past that, usage is dropped and load reports are refused (the host sends its report again later).
///
/// Load reports are written every second, usage every ``ServerConfiguration/usageFlushInterval``.
final class UsageBuffer: Service, Sendable {
    static let limit = 50_000
    static let applicationsPerToken = 100
    static let instancesPerToken = 2_000
    static let hostsPerToken = 5_000
    /// The most bytes of load reports waiting to be written (an estimate from the reports' text).
    static let reportBytesLimit = 16 << 20
    static let reportFlushInterval = Duration.seconds(1)

    private struct Key: Hashable {
        var bucket: String
        var flag: String
        var environment: String
        var appName: String
    }

    /// What one token named in the current hour.
    private struct Seen {
        var applications: Set<String> = []
        var instances: Set<String> = []
        var hosts: Set<String> = []
    }

    private struct Pending {
        var registrations: [String: ClientRegistration] = [:]
        var usage: [Key: FlagUsageCount] = [:]
        var reports: [String: (report: LoadReport, bytes: Int)] = [:]
        var reportBytes = 0
        var drops: [String: Int] = [:]
        var seen: [String: Seen] = [:]
        var hour = ""
    }

    /// Why a load report was not taken.
    enum ReportRefusal: Error {
        case tooManyHosts(Int)
        case busy
        case otherEnvironment(String)
    }

    private let pending = Mutex(Pending())
    private let board: any ServedBoard
    private let tokens: TokenCheck
    private let metrics: ServerMetrics
    private let configuration: ServerConfiguration

    init(board: any ServedBoard, tokens: TokenCheck, metrics: ServerMetrics, configuration: ServerConfiguration) {
        self.board = board
        self.tokens = tokens
        self.metrics = metrics
        self.configuration = configuration
    }

    /// Forgets what tokens named when the hour changed: the per-token caps are per hour.
    private static func rollHour(_ pending: inout Pending) {
        let hour = FlagUsageCount.bucket(for: Date())
        if pending.hour != hour {
            pending.hour = hour
            pending.seen = [:]
        }
    }

    private static func drop(_ pending: inout Pending, _ kind: String, _ count: Int = 1) {
        if count > 0 { pending.drops[kind, default: 0] += count }
    }

    /// Whether `token` may name this application and instance (noting them); counts a drop when not.
    private static func admit(_ pending: inout Pending, token: String?, app: String, instance: String) -> Bool {
        guard let token else { return true }
        rollHour(&pending)
        var seen = pending.seen[token] ?? Seen()
        defer { pending.seen[token] = seen }
        if !seen.applications.contains(app) {
            guard seen.applications.count < applicationsPerToken else {
                drop(&pending, TelemetryDrop.Kind.applicationsOverCap)
                return false
            }
            seen.applications.insert(app)
        }
        let key = app + "\u{0}" + instance
        if !seen.instances.contains(key) {
            guard seen.instances.count < instancesPerToken else {
                drop(&pending, TelemetryDrop.Kind.instancesOverCap)
                return false
            }
            seen.instances.insert(key)
        }
        return true
    }

    /// Counts telemetry dropped before it reached the buffer.
    func noteDropped(_ kind: String, _ count: Int) {
        pending.withLock { Self.drop(&$0, kind, count) }
    }

    func register(_ registration: ClientRegistration) {
        let key = "\(registration.appName)\u{0}\(registration.instanceID)\u{0}\(registration.environment)"
        let dropped = pending.withLock { pending -> Bool in
            guard Self.admit(&pending, token: registration.tokenName, app: registration.appName, instance: registration.instanceID)
            else { return true }
            if pending.registrations[key] == nil, pending.registrations.count >= Self.limit {
                Self.drop(&pending, TelemetryDrop.Kind.usageOverBuffer)
                return true
            }
            var merged = registration
            if let previous = pending.registrations[key] {
                merged.sdkVersion = registration.sdkVersion ?? previous.sdkVersion
                merged.strategies = registration.strategies ?? previous.strategies
            }
            pending.registrations[key] = merged
            return false
        }
        if dropped { metrics.droppedUsage.add(1) }
    }

    /// Adds usage counts of one application and instance, sent with `token`: counts of flags not in `knownFlags` are
    /// dropped (and counted), and so is the whole report when the token named too many applications or instances.
    func add(_ counts: [FlagUsageCount], token: String? = nil, instance: String = "", knownFlags: Set<String>? = nil) {
        let dropped = pending.withLock { pending -> Int in
            if let app = counts.first?.appName, !Self.admit(&pending, token: token, app: app, instance: instance) {
                return counts.count
            }
            var dropped = 0
            for count in counts {
                if let knownFlags, !knownFlags.contains(count.flag) {
                    Self.drop(&pending, TelemetryDrop.Kind.unknownFlag)
                    dropped += 1
                    continue
                }
                let key = Key(bucket: count.bucket, flag: count.flag, environment: count.environment, appName: count.appName)
                if var existing = pending.usage[key] {
                    existing.yes += count.yes
                    existing.no += count.no
                    for (name, value) in count.variants { existing.variants[name, default: 0] += value }
                    pending.usage[key] = existing
                } else if pending.usage.count < Self.limit {
                    pending.usage[key] = count
                } else {
                    Self.drop(&pending, TelemetryDrop.Kind.usageOverBuffer)
                    dropped += 1
                }
            }
            return dropped
        }
        if dropped > 0 { metrics.droppedUsage.add(dropped) }
    }

    /// Takes a remote host's load report; it replaces one of the same host id still waiting. Refused when the token
    /// named too many host ids this hour, when the host id reports from another environment, or when the buffer is full.
    func report(_ report: LoadReport, token: String) throws(ReportRefusal) {
        let bytes =
            report.hostID.utf8.count + report.hostVersion.utf8.count + (report.source?.utf8.count ?? 0)
            + report.entries.reduce(0) { sum, entry in
                sum + 64 + entry.pluginID.utf8.count + (entry.version?.utf8.count ?? 0) + (entry.reasonCode?.utf8.count ?? 0)
                    + (entry.reason?.utf8.count ?? 0) + (entry.warning?.utf8.count ?? 0)
            }
        let refusal = pending.withLock { pending -> ReportRefusal? in
            Self.rollHour(&pending)
            if let waiting = pending.reports[report.hostID], waiting.report.environment != report.environment {
                Self.drop(&pending, TelemetryDrop.Kind.reportOtherEnvironment)
                return .otherEnvironment(waiting.report.environment)
            }
            var seen = pending.seen[token] ?? Seen()
            if !seen.hosts.contains(report.hostID) {
                guard seen.hosts.count < Self.hostsPerToken else {
                    Self.drop(&pending, TelemetryDrop.Kind.hostsOverCap)
                    return .tooManyHosts(Self.hostsPerToken)
                }
                seen.hosts.insert(report.hostID)
                pending.seen[token] = seen
            }
            let replaced = pending.reports[report.hostID]?.bytes ?? 0
            guard pending.reportBytes - replaced + bytes <= Self.reportBytesLimit else {
                Self.drop(&pending, TelemetryDrop.Kind.reportsOverBuffer)
                return .busy
            }
            pending.reportBytes += bytes - replaced
            pending.reports[report.hostID] = (report, bytes)
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Writes what is buffered: load reports always, usage when `usage` is true. On failure the batch is dropped
    /// (telemetry) and the failure logged.
    func flush(usage: Bool = true) {
        let batch = pending.withLock { pending in
            var batch = Pending()
            swap(&batch.reports, &pending.reports)
            swap(&batch.drops, &pending.drops)
            pending.reportBytes = 0
            if usage {
                swap(&batch.registrations, &pending.registrations)
                swap(&batch.usage, &pending.usage)
            }
            return batch
        }
        do {
            try board.writeLoadReports(batch.reports.values.map(\.report))
        } catch {
            configuration.logger.warning(
                "cannot store load reports; this batch is dropped",
                metadata: ["error": "\(error.message)", "reports": "\(batch.reports.count)"])
        }
        do {
            try board.recordTelemetryDrops(batch.drops)
        } catch {
            configuration.logger.warning("cannot store counts of dropped telemetry", metadata: ["error": "\(error.message)"])
        }
        guard usage else { return }
        let used = tokens.takeLastUsed()
        guard !batch.registrations.isEmpty || !batch.usage.isEmpty || !used.isEmpty else { return }
        do {
            try board.recordClientUsage(
                registrations: Array(batch.registrations.values), usage: Array(batch.usage.values), tokensUsed: used)
        } catch {
            configuration.logger.warning(
                "cannot store client usage; this batch is dropped",
                metadata: ["error": "\(error.message)", "registrations": "\(batch.registrations.count)", "counts": "\(batch.usage.count)"])
        }
    }

    /// The environment a host id reports from: its report waiting here, else the telemetry file's.
    func reportingEnvironment(hostID: String) throws(BoardError) -> String? {
        if let waiting = pending.withLock({ $0.reports[hostID]?.report.environment }) { return waiting }
        return try board.reportingEnvironment(hostID: hostID)
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            var sinceUsage = Duration.zero
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let tick = min(Self.reportFlushInterval, configuration.usageFlushInterval)
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: tick) }
                sinceUsage += tick
                let withUsage = sinceUsage >= configuration.usageFlushInterval
                if withUsage { sinceUsage = .zero }
                await BoardWatcher.offPool { self.flush(usage: withUsage) }
            }
        } onGracefulShutdown: {
        }
        await BoardWatcher.offPool { self.flush() }
    }
}
