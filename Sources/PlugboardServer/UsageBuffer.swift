import Foundation
import Logging
import PlugboardStore
import ServiceLifecycle
import Synchronization

/// Client registrations and metrics, kept in memory and written to the board in one short unaudited transaction
/// every ``ServerConfiguration/usageFlushInterval``, so that SDK traffic never holds the board's write lock for
/// long or often. Bounded: past ``limit`` distinct entries, new ones are dropped (and counted in `/metrics`).
final class UsageBuffer: Service, Sendable {
    static let limit = 50_000

    private struct Key: Hashable {
        var bucket: String
        var flag: String
        var environment: String
        var appName: String
    }

    private struct Pending {
        var registrations: [String: ClientRegistration] = [:]
        var usage: [Key: FlagUsageCount] = [:]
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

    func register(_ registration: ClientRegistration) {
        let key = "\(registration.appName)\u{0}\(registration.instanceID)\u{0}\(registration.environment)"
        let dropped = pending.withLock { pending -> Bool in
            if pending.registrations[key] == nil, pending.registrations.count >= Self.limit { return true }
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

    func add(_ counts: [FlagUsageCount]) {
        let dropped = pending.withLock { pending -> Int in
            var dropped = 0
            for count in counts {
                let key = Key(bucket: count.bucket, flag: count.flag, environment: count.environment, appName: count.appName)
                if var existing = pending.usage[key] {
                    existing.yes += count.yes
                    existing.no += count.no
                    for (name, value) in count.variants { existing.variants[name, default: 0] += value }
                    pending.usage[key] = existing
                } else if pending.usage.count < Self.limit {
                    pending.usage[key] = count
                } else {
                    dropped += 1
                }
            }
            return dropped
        }
        if dropped > 0 { metrics.droppedUsage.add(dropped) }
    }

    /// Writes what is buffered. On failure the batch is dropped (telemetry) and the failure logged.
    func flush() {
        let batch = pending.withLock { pending in
            defer { pending = Pending() }
            return pending
        }
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

    func run() async throws {
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.configuration.usageFlushInterval) }
                await BoardWatcher.offPool { self.flush() }
            }
        } onGracefulShutdown: {
        }
        await BoardWatcher.offPool { self.flush() }
    }
}
