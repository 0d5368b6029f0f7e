public import Foundation

/// The facts a flag is evaluated against: who is asking, from where, and when.
///
/// Mirrors the Unleash context. The standard fields can also be given inside ``properties`` under their own
/// names (`properties["userId"]`); as in Unleash's engine, the top-level field wins when both are set.
/// Decodes from the context JSON of the Unleash client specification (`null` values count as absent).
public struct UnleashContext: Sendable, Hashable, Codable {
    /// The user's id; the default stickiness for rollouts and variants.
    public var userId: String?
    /// The session id; the fallback stickiness when there is no user id.
    public var sessionId: String?
    /// The environment name; Unleash sends flags per environment, so this is usually informational.
    public var environment: String?
    /// The application name.
    public var appName: String?
    /// The caller's IP address, IPv4 or IPv6.
    public var remoteAddress: String?
    /// The evaluation time as an RFC 3339 date-time; when absent, date constraints use the current time.
    public var currentTime: String?
    /// Custom context fields (`tenant`, `version`, `country`, …).
    public var properties: [String: String] {
        get { propertyIndex.properties }
        _modify {
            var properties = propertyIndex.properties
            propertyIndex = .empty  // so that `properties` is the only reference and changes in place
            defer { propertyIndex = PropertyIndex.of(properties) }
            yield &properties
        }
        set { propertyIndex = PropertyIndex.of(newValue) }
    }

    /// The properties with their names' hashes, built when the properties are set, so that an evaluation finds a
    /// property by comparing integers instead of hashing or comparing strings.
    private(set) var propertyIndex: PropertyIndex

    /// Creates a context.
    public init(
        userId: String? = nil, sessionId: String? = nil, environment: String? = nil, appName: String? = nil,
        remoteAddress: String? = nil, currentTime: String? = nil, properties: [String: String] = [:]
    ) {
        self.userId = userId
        self.sessionId = sessionId
        self.environment = environment
        self.appName = appName
        self.remoteAddress = remoteAddress
        self.currentTime = currentTime
        self.propertyIndex = PropertyIndex.of(properties)
    }

    /// Creates a context whose ``currentTime`` is the given date, written in RFC 3339 (UTC, milliseconds).
    public init(userId: String? = nil, sessionId: String? = nil, currentDate: Date, properties: [String: String] = [:]) {
        self.init(userId: userId, sessionId: sessionId, currentTime: UnleashDate.format(currentDate), properties: properties)
    }

    private enum CodingKeys: String, CodingKey {
        case userId, sessionId, environment, appName, remoteAddress, currentTime, properties
    }

    /// Decodes a context; `null` fields and `null` property values count as absent, and property values that
    /// are JSON numbers or booleans are kept as their text. As in Unleash's engine, any other top-level key
    /// with a string value is a property too, and wins over the same name inside `properties`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        userId = try container.decodeIfPresent(LenientString.self, forKey: .userId)?.text
        sessionId = try container.decodeIfPresent(LenientString.self, forKey: .sessionId)?.text
        environment = try container.decodeIfPresent(LenientString.self, forKey: .environment)?.text
        appName = try container.decodeIfPresent(LenientString.self, forKey: .appName)?.text
        remoteAddress = try container.decodeIfPresent(LenientString.self, forKey: .remoteAddress)?.text
        currentTime = try container.decodeIfPresent(LenientString.self, forKey: .currentTime)?.text
        let raw = try container.decodeIfPresent([String: LenientString].self, forKey: .properties) ?? [:]
        var properties = raw.compactMapValues(\.text)
        let all = try decoder.container(keyedBy: AnyKey.self)
        for key in all.allKeys where CodingKeys(stringValue: key.stringValue) == nil {
            if let value = try? all.decode(String.self, forKey: key) { properties[key.stringValue] = value }
        }
        propertyIndex = PropertyIndex.of(properties)
    }

    /// Whether every field and property is the same.
    public static func == (lhs: UnleashContext, rhs: UnleashContext) -> Bool {
        lhs.userId == rhs.userId && lhs.sessionId == rhs.sessionId && lhs.environment == rhs.environment
            && lhs.appName == rhs.appName && lhs.remoteAddress == rhs.remoteAddress && lhs.currentTime == rhs.currentTime
            && lhs.properties == rhs.properties
    }

    /// Hashes every field and the properties.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(userId)
        hasher.combine(sessionId)
        hasher.combine(environment)
        hasher.combine(appName)
        hasher.combine(remoteAddress)
        hasher.combine(currentTime)
        hasher.combine(properties)
    }

    private struct AnyKey: CodingKey {
        let stringValue: String
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    /// Sets the field Unleash names `name` (`userId`, `sessionId`, `environment`, `appName`, `remoteAddress`,
    /// `currentTime`) to `value`, or else the property `name`.
    public mutating func set(_ name: String, to value: String) {
        switch name {
        case "userId": userId = value
        case "sessionId": sessionId = value
        case "environment": environment = value
        case "appName": appName = value
        case "remoteAddress": remoteAddress = value
        case "currentTime": currentTime = value
        default: properties[name] = value
        }
    }

    /// Encodes the context, omitting absent fields.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(userId, forKey: .userId)
        try container.encodeIfPresent(sessionId, forKey: .sessionId)
        try container.encodeIfPresent(environment, forKey: .environment)
        try container.encodeIfPresent(appName, forKey: .appName)
        try container.encodeIfPresent(remoteAddress, forKey: .remoteAddress)
        try container.encodeIfPresent(currentTime, forKey: .currentTime)
        if !properties.isEmpty { try container.encode(properties, forKey: .properties) }
    }
}
