import Crypto
import Foundation
import NIOCore
import PlugboardFlags
import PlugboardModel
import PlugboardStore

/// One environment's flags as the server serves them, computed once per board change: the features JSON and its
/// ETag, a compiled snapshot for OFREP, and the delta events since the server started (bounded).
struct EnvironmentFeed: Sendable {
    /// How many delta events are kept for clients that resume; older ones get a hydration instead.
    static let eventLogLimit = 1000

    var features: FeatureSet
    var snapshot: FlagSnapshot
    /// Flags with variants: their OFREP value is the variant's, not a boolean.
    var variantFlags: Set<String>
    /// Every flag's name: usage counts of other names are dropped.
    var flagNames: Set<String>
    /// The features JSON, exactly as `plugboard flag export` writes it.
    var body: ByteBuffer
    /// A strong ETag: the SHA-256 of `body`, so every server that serves the same flags gives the same tag.
    var etag: String
    /// The id of the latest delta event (the delta ETag and the SSE event id).
    var revision: Int
    /// Delta events after the hydration, oldest first: (eventId, JSON object).
    var events: [(id: Int, json: String)] = []

    init(features: FeatureSet, revision: Int) {
        self.features = features
        self.snapshot = (try? FlagSnapshot(features, mode: .lenient)) ?? .empty
        self.variantFlags = Self.variantFlags(features)
        self.flagNames = Set(features.features.map(\.name))
        let data = features.encoded(prettyPrinted: false)
        self.body = ByteBuffer(bytes: data)
        self.etag = Self.etag(data)
        self.revision = revision
    }

    /// Moves to `next`, appending one delta event per changed feature or segment. Returns the events added.
    mutating func advance(to next: FeatureSet) -> [(id: Int, json: String)] {
        let data = next.encoded(prettyPrinted: false)
        let etag = Self.etag(data)
        guard etag != self.etag else { return [] }
        var added: [(id: Int, json: String)] = []
        func append(_ object: [String: Any]) {
            revision += 1
            var object = object
            object["eventId"] = revision
            added.append((revision, Self.json(object)))
        }
        let oldSegments = Dictionary((features.segments ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let newSegments = Dictionary((next.segments ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        // Segments first: an updated feature may refer to a new segment.
        for segment in (next.segments ?? []) where oldSegments[segment.id] != segment {
            append(["type": "segment-updated", "segment": Self.jsonObject(segment)])
        }
        let oldFeatures = Dictionary(features.features.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let newNames = Set(next.features.map(\.name))
        for feature in next.features where oldFeatures[feature.name] != feature {
            append(["type": "feature-updated", "feature": Self.jsonObject(feature)])
        }
        for feature in features.features where !newNames.contains(feature.name) {
            append(["type": "feature-removed", "featureName": feature.name, "project": feature.project ?? "default"])
        }
        for segment in (features.segments ?? []) where newSegments[segment.id] == nil {
            append(["type": "segment-removed", "segmentId": segment.id])
        }
        features = next
        snapshot = (try? FlagSnapshot(next, mode: .lenient)) ?? .empty
        variantFlags = Self.variantFlags(next)
        flagNames = newNames
        body = ByteBuffer(bytes: data)
        self.etag = etag
        events.append(contentsOf: added)
        if events.count > Self.eventLogLimit { events.removeFirst(events.count - Self.eventLogLimit) }
        return added
    }

    /// The hydration event: every feature and segment, as of `revision`.
    func hydration(namePrefix: String? = nil) -> String {
        var object = Self.jsonObject(features) as? [String: Any] ?? [:]
        if let namePrefix, let list = object["features"] as? [Any] {
            object["features"] = list.filter { (($0 as? [String: Any])?["name"] as? String)?.hasPrefix(namePrefix) ?? false }
        }
        object["segments"] = object["segments"] ?? [Any]()
        object.removeValue(forKey: "version")
        object["type"] = "hydration"
        object["eventId"] = revision
        return Self.json(object)
    }

    /// The events after `eventID`, or nil when the log does not reach back that far (or the id is from elsewhere).
    func events(after eventID: Int) -> [(id: Int, json: String)]? {
        if eventID == revision { return [] }
        guard eventID < revision else { return nil }
        let oldest = events.first?.id ?? revision + 1
        guard eventID >= oldest - 1 else { return nil }
        return events.filter { $0.id > eventID }
    }

    static func etag(_ data: Data) -> String {
        // The first 16 bytes of the digest, as the board writes every digest (lower-case hex).
        "\"" + SHA256.hex(data).prefix(32) + "\""
    }

    static func variantFlags(_ features: FeatureSet) -> Set<String> {
        Set(
            features.features.filter { feature in
                !(feature.variants ?? []).isEmpty || (feature.strategies ?? []).contains { !($0.variants ?? []).isEmpty }
            }.map(\.name))
    }

    static func jsonObject(_ value: some Encodable) -> Any {
        let encoder = JSONEncoder()
        guard let data = try? encoder.encode(value), let object = try? JSONSerialization.jsonObject(with: data) else { return [:] }
        return object
    }

    static func json(_ object: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
