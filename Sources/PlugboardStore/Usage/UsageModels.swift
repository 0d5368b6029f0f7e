package import Foundation
import PlugboardModel

/// One SDK instance announcing itself (Unleash `register`, or the sender of a metrics report).
package struct ClientRegistration: Sendable, Hashable {
    package var appName: String
    package var instanceID: String
    package var environment: String
    package var sdkVersion: String?
    package var strategies: [String]?
    package var tokenName: String?
    package var at: Date = Date()

    /// A value with each stored property given.
    package init(
        appName: String, instanceID: String, environment: String, sdkVersion: String? = nil, strategies: [String]? = nil,
        tokenName: String? = nil, at: Date = Date()
    ) {
        self.appName = appName
        self.instanceID = instanceID
        self.environment = environment
        self.sdkVersion = sdkVersion
        self.strategies = strategies
        self.tokenName = tokenName
        self.at = at
    }
}

/// How often one application evaluated one flag in one hour.
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

    /// A value with each stored property given.
    package init(bucket: String, flag: String, environment: String, appName: String, yes: Int, no: Int, variants: [String: Int] = [:]) {
        self.bucket = bucket
        self.flag = flag
        self.environment = environment
        self.appName = appName
        self.yes = yes
        self.no = no
        self.variants = variants
    }

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
