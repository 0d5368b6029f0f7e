public import Foundation
import PlugboardModel

/// One SDK instance announcing itself (Unleash `register`, or the sender of a metrics report).
public struct ClientRegistration: Sendable, Hashable {
    public var appName: String
    public var instanceID: String
    public var environment: String
    public var sdkVersion: String?
    public var strategies: [String]?
    public var tokenName: String?
    public var at: Date

    /// Creates a registration.
    public init(
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
public struct FlagUsageCount: Sendable, Hashable {
    /// The hour, `YYYY-MM-DDTHH:00:00Z`; see ``FlagUsageCount/bucket(for:)``.
    public var bucket: String
    public var flag: String
    public var environment: String
    public var appName: String
    public var yes: Int
    public var no: Int
    /// Variant name → count.
    public var variants: [String: Int]

    /// Creates a count.
    public init(bucket: String, flag: String, environment: String, appName: String, yes: Int, no: Int, variants: [String: Int] = [:]) {
        self.bucket = bucket
        self.flag = flag
        self.environment = environment
        self.appName = appName
        self.yes = yes
        self.no = no
        self.variants = variants
    }

    /// The hour bucket a time falls in, as stored.
    public static func bucket(for date: Date) -> String {
        let seconds = (date.timeIntervalSince1970 / 3600).rounded(.down) * 3600
        let text = Timestamp.format(Date(timeIntervalSince1970: seconds))
        return String(text.prefix(13)) + ":00:00Z"
    }
}

/// A row of `plugboard clients`.
public struct ClientInstance: Sendable, Hashable, Codable {
    public let appName: String
    public let instanceID: String
    public let environment: String
    public let sdkVersion: String?
    public let tokenName: String?
    public let firstSeen: String
    public let lastSeen: String
}

/// How clients used one flag in one environment, over the kept hour buckets.
public struct FlagUsageSummary: Sendable, Hashable, Codable {
    public let environment: String
    /// The last hour in which a client evaluated the flag (`YYYY-MM-DDTHH:00:00Z`), nil if never.
    public let lastSeen: String?
    public let yes: Int
    public let no: Int
    /// Variant name → count.
    public let variants: [String: Int]
}

/// How much client telemetry the telemetry file keeps (see ``TelemetryLimits``).
public enum UsageRetention {
    /// Hour buckets older than this many days are deleted.
    public static let days = 30
    /// At most this many usage rows are kept (the oldest buckets go first).
    public static let maxUsageRows = 100_000
    /// At most this many client instances are kept (the longest silent go first).
    public static let maxInstances = 10_000
}
