import Foundation
import PlugboardVersioning

/// One advisory in OSV's format (schema 1.7), as this board takes it in: the ecosystem `Plugboard`, each package's name
/// a plug-in id, `SEMVER` ranges (`introduced`, `fixed`, `last_affected`) or lists of `versions`.
///
/// ```json
/// {"schema_version": "1.7.0", "id": "PBSA-2026-0001", "modified": "2026-11-20T10:00:00Z",
///  "aliases": ["CVE-2026-12345"], "summary": "The calendar plug-in logs its OAuth token",
///  "database_specific": {"severity": "HIGH"},
///  "affected": [{"package": {"ecosystem": "Plugboard", "name": "com.example.calendar"},
///                "ranges": [{"type": "SEMVER", "events": [{"introduced": "1.2.0"}, {"fixed": "1.4.2"}]}]}]}
/// ```
///
/// The severity is the board's own qualitative level: `database_specific.severity` (`CRITICAL`, `HIGH`, `MODERATE` or
/// `MEDIUM`, `LOW`) when given, else the base score of the first CVSS v3 vector among `severity` (``CVSSv3``), else
/// `unknown`, which acts as `low`. CVSS v2 and v4 vectors are kept in the document but not scored.
public struct OSVDocument: Sendable, Hashable {
    /// The largest document taken in, in bytes.
    public static let maximumSize = 64 << 10
    /// The most `affected` entries, ranges of an entry, events of a range, or versions of a list.
    public static let maximumEntries = 100

    public let id: String
    public let modified: String
    public let published: String?
    /// The document's own withdrawal time, if it was withdrawn by its publisher.
    public let withdrawn: String?
    public let aliases: [String]
    public let summary: String?
    public let severity: AdvisorySeverity
    /// What it affects, by plug-in id (each plug-in once; entries of the same plug-in are joined).
    public let affected: [String: [AdvisoryRange]]
    /// The document's text, exactly as given.
    public let raw: String

    /// Parses and checks one document; `file` names it in the sentence of a refusal.
    ///
    /// - Throws: ``BoardError`` `.invalidInput`, one sentence naming the file: not JSON, too large, a duplicate key,
    ///   another ecosystem, a package name that is not a plug-in id, a range that is not `SEMVER`, an event or version
    ///   that is not a semantic version.
    public static func parse(_ text: String, file: String) throws(BoardError) -> OSVDocument {
        func refuse(_ why: String) -> BoardError { BoardError(.invalidInput, "the advisory \(file) \(why); nothing was imported") }
        let data = Data(text.utf8)
        guard data.count <= maximumSize else { throw refuse("is larger than \(maximumSize >> 10) KiB") }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw refuse("is not a JSON object")
        }
        if let duplicate = DuplicateKeys.first(in: data) {
            throw refuse("has the key '\(Validate.escaped(duplicate.key))' twice (in \(Validate.escaped(duplicate.location)))")
        }
        guard let id = object["id"] as? String, id.utf8.count <= 128, isIdentifier(id) else {
            throw refuse("has no id of 1 to 128 letters, digits, '.', '_', ':' or '-'")
        }
        func time(_ key: String, required: Bool) throws(BoardError) -> String? {
            guard let value = object[key] else {
                if required { throw refuse("(\(id)) has no \(key) time") }
                return nil
            }
            guard let text = value as? String, text.count <= 64, Timestamp.parse(text) != nil else {
                throw refuse("(\(id)) has a \(key) that is not an RFC 3339 time")
            }
            return text
        }
        let modified = try time("modified", required: true) ?? ""
        let published = try time("published", required: false)
        let withdrawn = try time("withdrawn", required: false)
        let aliases = object["aliases"] as? [String] ?? []
        if object["aliases"] != nil,
            object["aliases"] as? [String] == nil || aliases.count > 32
                || aliases.contains(where: { $0.isEmpty || $0.utf8.count > 128 || !isIdentifier($0) })
        {
            throw refuse("(\(id)) has aliases that are not a list of at most 32 ids")
        }
        let summary = object["summary"] as? String
        if let summary {
            do { try Validate.name(summary, field: "its summary", limit: 1024) } catch { throw refuse("(\(id)): \(error.message)") }
        }
        guard let entries = object["affected"] as? [[String: Any]], !entries.isEmpty, entries.count <= maximumEntries else {
            throw refuse("(\(id)) affects nothing: it needs 1 to \(maximumEntries) entries in affected")
        }
        var affected: [String: [AdvisoryRange]] = [:]
        for entry in entries {
            let package = entry["package"] as? [String: Any]
            guard let ecosystem = package?["ecosystem"] as? String, ecosystem == "Plugboard" else {
                let named = (package?["ecosystem"] as? String).map { "'\(Validate.printable($0))'" } ?? "none"
                throw refuse("(\(id)) is for the ecosystem \(named), not Plugboard")
            }
            guard let name = package?["name"] as? String, (try? Validate.pluginID(name)) != nil else {
                throw refuse("(\(id)) names a package that is not a plug-in id")
            }
            let ranges = try entry["ranges"].map { value throws(BoardError) in try parseRanges(value, id, name, refuse) } ?? []
            let versions = try entry["versions"].map { value throws(BoardError) in try parseVersions(value, id, name, refuse) } ?? []
            guard !ranges.isEmpty || !versions.isEmpty else { throw refuse("(\(id)) gives no range and no version of \(name)") }
            affected[name, default: []] += ranges + (versions.isEmpty ? [] : [AdvisoryRange(versions: versions)])
        }
        return OSVDocument(
            id: id, modified: modified, published: published, withdrawn: withdrawn, aliases: aliases, summary: summary,
            severity: severity(of: object), affected: affected, raw: text)
    }

    private static func parseRanges(_ value: Any, _ id: String, _ name: String, _ refuse: (String) -> BoardError) throws(BoardError)
        -> [AdvisoryRange]
    {
        guard let ranges = value as? [[String: Any]], ranges.count <= maximumEntries else {
            throw refuse("(\(id)) has ranges of \(name) that are not a list of at most \(maximumEntries) objects")
        }
        var result: [AdvisoryRange] = []
        for range in ranges {
            guard range["type"] as? String == "SEMVER" else {
                throw refuse("(\(id)) has a range of \(name) of type \(range["type"] ?? "none"); only SEMVER ranges are read")
            }
            guard let events = range["events"] as? [[String: Any]], !events.isEmpty, events.count <= maximumEntries else {
                throw refuse("(\(id)) has a range of \(name) without events")
            }
            var parsed: [AdvisoryEvent] = []
            for event in events {
                guard event.count == 1, let (key, value) = event.first, let kind = AdvisoryEvent.Kind(rawValue: key),
                    let version = value as? String
                else {
                    throw refuse("(\(id)) has an event of \(name) that is not one of introduced, fixed or last_affected with a version")
                }
                guard (kind == .introduced && version == "0") || SemanticVersion(parsing: version) != nil else {
                    throw refuse(
                        "(\(id)) has the \(key) event '\(Validate.printable(version))' of \(name), which is not a semantic version")
                }
                parsed.append(AdvisoryEvent(kind, version))
            }
            guard parsed.contains(where: { $0.kind == .introduced }) else {
                throw refuse("(\(id)) has a range of \(name) with no introduced event")
            }
            if parsed.contains(where: { $0.kind == .fixed }), parsed.contains(where: { $0.kind == .lastAffected }) {
                throw refuse("(\(id)) has a range of \(name) with both fixed and last_affected, which OSV does not allow")
            }
            result.append(AdvisoryRange(events: parsed))
        }
        return result
    }

    private static func parseVersions(_ value: Any, _ id: String, _ name: String, _ refuse: (String) -> BoardError) throws(BoardError)
        -> [String]
    {
        guard let versions = value as? [String], versions.count <= maximumEntries else {
            throw refuse("(\(id)) has versions of \(name) that are not a list of at most \(maximumEntries) versions")
        }
        if let bad = versions.first(where: { SemanticVersion(parsing: $0) == nil }) {
            throw refuse("(\(id)) lists the version '\(Validate.printable(bad))' of \(name), which is not a semantic version")
        }
        return versions
    }

    /// `database_specific.severity`, else the first CVSS v3 vector's base score, else unknown.
    private static func severity(of object: [String: Any]) -> AdvisorySeverity {
        if let named = (object["database_specific"] as? [String: Any])?["severity"] as? String {
            switch named.uppercased() {
            case "CRITICAL": return .critical
            case "HIGH": return .high
            case "MODERATE", "MEDIUM": return .medium
            case "LOW": return .low
            default: break
            }
        }
        let scores = object["severity"] as? [[String: Any]] ?? []
        for entry in scores where entry["type"] as? String == "CVSS_V3" {
            if let vector = entry["score"] as? String, let score = CVSSv3.baseScore(vector) { return CVSSv3.severity(score) }
        }
        return .unknown
    }

    /// Checks an advisory's id as a command names it: 1 to 128 letters, digits, `.`, `_`, `:` or `-`.
    public static func validateID(_ id: String) throws(BoardError) {
        guard id.utf8.count <= 128, isIdentifier(id) else {
            throw BoardError(.invalidInput, "an advisory id has 1 to 128 letters, digits, '.', '_', ':' or '-'")
        }
    }

    /// Letters, digits, `.`, `_`, `:` and `-`: OSV ids and aliases (`GHSA-xxxx-xxxx-xxxx`, `CVE-2026-1234`).
    private static func isIdentifier(_ text: String) -> Bool {
        !text.isEmpty
            && text.unicodeScalars.allSatisfy {
                ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || ".-_:".unicodeScalars.contains($0)
            }
    }
}

/// The base score of a CVSS v3.0 or v3.1 vector, by the specification's formulas (section 7 of CVSS v3.1).
public enum CVSSv3 {
    /// The base score (0.0 to 10.0) of `vector` (`CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H` is 9.8); nil when it is
    /// not a complete v3 base vector.
    public static func baseScore(_ vector: String) -> Double? {
        let parts = vector.split(separator: "/").map(String.init)
        guard let head = parts.first, head == "CVSS:3.0" || head == "CVSS:3.1" else { return nil }
        var metrics: [String: String] = [:]
        for part in parts.dropFirst() {
            let pair = part.split(separator: ":", maxSplits: 1).map(String.init)
            guard pair.count == 2, metrics[pair[0]] == nil else { return nil }
            metrics[pair[0]] = pair[1]
        }
        let changed: Bool
        switch metrics["S"] {
        case "U": changed = false
        case "C": changed = true
        default: return nil
        }
        let impacts = ["H": 0.56, "L": 0.22, "N": 0.0]
        guard let av = ["N": 0.85, "A": 0.62, "L": 0.55, "P": 0.2][metrics["AV"] ?? ""],
            let ac = ["L": 0.77, "H": 0.44][metrics["AC"] ?? ""],
            let pr = (changed ? ["N": 0.85, "L": 0.68, "H": 0.5] : ["N": 0.85, "L": 0.62, "H": 0.27])[metrics["PR"] ?? ""],
            let ui = ["N": 0.85, "R": 0.62][metrics["UI"] ?? ""],
            let c = impacts[metrics["C"] ?? ""], let i = impacts[metrics["I"] ?? ""], let a = impacts[metrics["A"] ?? ""]
        else { return nil }
        let iss = 1 - (1 - c) * (1 - i) * (1 - a)
        let impact = changed ? 7.52 * (iss - 0.029) - 3.25 * pow(iss - 0.02, 15) : 6.42 * iss
        guard impact > 0 else { return 0 }
        let exploitability = 8.22 * av * ac * pr * ui
        return roundUp(min(changed ? 1.08 * (impact + exploitability) : impact + exploitability, 10))
    }

    /// The qualitative rating of a score: 9.0 and above critical, 7.0 high, 4.0 medium, else low.
    public static func severity(_ score: Double) -> AdvisorySeverity {
        score >= 9 ? .critical : score >= 7 ? .high : score >= 4 ? .medium : .low
    }

    /// CVSS v3.1's Roundup: the smallest number of one decimal at or above `value`, without floating-point surprises.
    private static func roundUp(_ value: Double) -> Double {
        let scaled = Int((value * 100_000).rounded())
        return scaled % 10_000 == 0 ? Double(scaled) / 100_000 : Double(scaled / 10_000 + 1) / 10
    }
}
