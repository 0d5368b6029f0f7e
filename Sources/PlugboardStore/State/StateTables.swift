import Crypto
import Foundation

/// A table whose rows the audit log proves: its name and the columns of its primary key.
///
/// A row's identity in the proof is its *key*: SQLite's `json_array(key columns…)` of the row, for example
/// `["com.example.a","1.0.0"]`. Its *digest* is the SHA-256 of its canonical encoding (``StateDigest/rowDigest``).
struct StateTable: Sendable, Hashable {
    /// The table's name.
    let name: String
    /// The primary key's columns, in order.
    let key: [String]
    /// Columns written without an audit row on purpose (runtime data such as when a token was last used): left out
    /// of the row's digest.
    let excluded: Set<String>
    /// The SQL condition that selects the row whose key is the statement's first argument (a key as
    /// ``keyExpression(_:)`` makes it).
    let keyCondition: String

    init(name: String, key: [String], excluded: Set<String> = []) {
        self.name = name
        self.key = key
        self.excluded = excluded
        keyCondition = key.enumerated().map { "\($0.element) = json_extract(?1, '$[\($0.offset)]')" }.joined(separator: " AND ")
    }

    /// The SQL expression of a row's key, with `prefix` (`NEW.`, `OLD.` or nothing) before each column.
    func keyExpression(_ prefix: String = "") -> String {
        "json_array(" + key.map { prefix + $0 }.joined(separator: ", ") + ")"
    }
}

/// The tables of the board's policy, whose every row the audit log proves.
///
/// Not here, on purpose: `audit_log` itself (its chain proves it), `hosts` and `load_reports` (hosts' telemetry),
/// `client_instances` and `flag_usage` (what SDKs report to `plugboard serve`),
/// `state_digests` and `state_buckets` (an index of the log, checked against it), `webhook_deliveries` (how far delivery
/// got, runtime data). A migration that adds a table of
/// policy adds it here; the migration's own `board.baseline` row then records its rows.
enum StateTables {
    static let all: [StateTable] = [
        StateTable(name: "board_info", key: ["key"]),
        StateTable(name: "schema_migrations", key: ["version"]),
        StateTable(name: "admins", key: ["principal"]),
        StateTable(name: "environments", key: ["name"]),
        StateTable(name: "plugins", key: ["id"]),
        StateTable(name: "artifacts", key: ["sha256"]),
        StateTable(name: "plugin_versions", key: ["plugin_id", "version"]),
        StateTable(name: "plugin_dependencies", key: ["plugin_id", "version", "dependency_id"]),
        StateTable(name: "plugin_owners", key: ["plugin_id", "principal"]),
        StateTable(name: "plugin_environments", key: ["plugin_id", "environment"]),
        StateTable(name: "kill_switches", key: ["id"]),
        StateTable(name: "flags", key: ["name"]),
        StateTable(name: "flag_environments", key: ["flag_name", "environment"]),
        StateTable(name: "segments", key: ["id"]),
        StateTable(name: "secret_master_key", key: ["id"]),
        StateTable(name: "secret_data_keys", key: ["plugin_id", "version"]),
        StateTable(name: "secret_values", key: ["plugin_id", "key"]),
        StateTable(name: "api_tokens", key: ["name"], excluded: ["last_used_at"]),
        StateTable(name: "signers", key: ["key_id", "plugin_id"]),
        StateTable(name: "signer_revocations", key: ["key_id"]),
        StateTable(name: "release_signatures", key: ["plugin_id", "version", "key_id"]),
        StateTable(name: "signature_policies", key: ["environment"]),
        StateTable(name: "access_tokens", key: ["principal", "name"], excluded: ["last_used_at"]),
        StateTable(name: "quarantine_releases", key: ["host_id", "plugin_id", "version"]),
        StateTable(name: "rollouts", key: ["plugin_id", "environment"]),
        StateTable(name: "approval_policies", key: ["environment"]),
        StateTable(name: "change_requests", key: ["id"]),
        StateTable(name: "change_approvals", key: ["change_id", "principal"]),
        StateTable(name: "approvers", key: ["key_id"]),
        StateTable(name: "enablement_approvals", key: ["plugin_id", "environment"]),
        StateTable(name: "principal_groups", key: ["name", "principal"]),
        StateTable(name: "identities", key: ["issuer", "subject"]),
        StateTable(name: "sso_group_roles", key: ["issuer", "group_name", "role", "plugin_id"]),
        StateTable(name: "webhooks", key: ["name"]),
        StateTable(name: "webhook_signing_keys", key: ["id"]),
        StateTable(name: "advisories", key: ["id"]),
        StateTable(name: "advisory_ranges", key: ["advisory_id", "plugin_id", "ordinal"]),
        StateTable(name: "advisory_actions", key: ["advisory_id", "environment"]),
        StateTable(name: "advisory_policies", key: ["environment"]),
        StateTable(name: "advisory_feeds", key: ["name"]),
    ]

    static let byName: [String: StateTable] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}

/// One row's place in the proof: its table and key.
struct StateEntity: Hashable, Comparable, Sendable {
    let table: String
    let key: String

    /// Ordered by table, then key, each as UTF-8 bytes: SQLite's `ORDER BY tbl, key` and Python's sort of byte
    /// pairs give the same order.
    static func < (a: StateEntity, b: StateEntity) -> Bool {
        if a.table != b.table { return a.table.utf8.lexicographicallyPrecedes(b.table.utf8) }
        return a.key.utf8.lexicographicallyPrecedes(b.key.utf8)
    }

    /// The key for people: `mallory`, `com.example.a@1.0.0`, `com.example.a/bob`.
    var readableKey: String {
        guard let data = key.data(using: .utf8), let values = try? JSONSerialization.jsonObject(with: data) as? [Any] else { return key }
        let parts = values.map { "\($0)" }
        if table == "plugin_versions" || table == "secret_data_keys", parts.count == 2 { return parts[0] + "@" + parts[1] }
        if table == "plugin_dependencies", parts.count == 3 { return "\(parts[0])@\(parts[1]) → \(parts[2])" }
        if table == "release_signatures", parts.count == 3 { return "\(parts[0])@\(parts[1]) by key \(parts[2])" }
        if table == "quarantine_releases", parts.count == 3 { return "\(parts[1])@\(parts[2]) on \(parts[0])" }
        if table == "rollouts", parts.count == 2 { return "\(parts[0]) in \(parts[1])" }
        return parts.joined(separator: "/")
    }
}
