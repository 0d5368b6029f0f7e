package import Foundation
import PlugboardMacros
import PlugboardModel

/// One SDK instance announcing itself (Unleash `register`, or the sender of a metrics report).
@MemberwiseInit(.package)
package struct ClientRegistration: Sendable, Hashable {
    package var appName: String
    package var instanceID: String
    package var environment: String
    package var sdkVersion: String?
    package var strategies: [String]?
    package var tokenName: String?
    package var at: Date = Date()
}

/// How often one application evaluated one flag in one hour.
@MemberwiseInit(.package)
package struct FlagUsageCount: Sendable, Hashable {
    /// The hour, `YYYY-MM-DDTHH:00:00Z`; see ``FlagUsageCount/bucket(for:)``.
    package var bucket: String
    package var flag: String
    package var environment: String
    package var appName: String
    package var yes: Int
    package var no: Int
    /// Variant name → count.
    package var variants: [String: Int] = [:]

    /// The hour bucket a time falls in, as stored.
    package static func bucket(for date: Date) -> String {
        let seconds = (date.timeIntervalSince1970 / 3600).rounded(.down) * 3600
        let text = Timestamp.format(Date(timeIntervalSince1970: seconds))
        return String(text.prefix(13)) + ":00:00Z"
    }
}

/// How much client telemetry the telemetry file keeps (see ``TelemetryLimits``).
package enum UsageRetention {
    /// Hour buckets older than this many days are deleted.
    package static let days = 30
    /// At most this many usage rows are kept (the oldest buckets go first).
    package static let maxUsageRows = 100_000
    /// At most this many client instances are kept (the longest silent go first).
    package static let maxInstances = 10_000
}
