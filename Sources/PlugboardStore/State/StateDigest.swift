import Crypto
import Foundation
import GRDB
import GRDBSQLite

/// The encodings of the state proof. They are simple on purpose, so that an auditor can recompute them with
/// `sqlite3` and a short script (the DocC article "Reading the board" has one):
///
/// - A row's digest: SHA-256 of `plugboard-row-v1\n<table>\n`, then for each column in table order
///   `<name>=<value>\n`, the value written `-` for NULL, `i:<integer>`, `r:<%.17g>`, `t:<UTF-8 length>:<text>` or
///   `b:<length>:<bytes>`; lower-case hex.
/// - An entity's line: `<table>\t<key>\t<digest>\n`, and its bucket: the first byte of SHA-256(`<table>\t<key>`).
/// - A bucket's hash: SHA-256 of its lines sorted by table then key (empty bucket: SHA-256 of nothing).
/// - The state root: SHA-256 of `plugboard-state-v1\n` and the 256 bucket hashes, each followed by `\n`.
enum StateDigest {
    /// The hash of a bucket without entities.
    static let emptyBucket = SHA256.hex(Data())

    /// The digest of a row: `columns` are the table's column names, `values` the row's values in that order.
    static func rowDigest(table: String, columns: [String], values: [DatabaseValue]) -> String {
        rowDigest(table: table, columns: columns) { index, bytes in
            switch values[index].storage {
            case .null: appendNull(to: &bytes)
            case .int64(let number): appendInteger(number, to: &bytes)
            case .double(let number): appendReal(number, to: &bytes)
            case .string(var text): text.withUTF8 { appendBytes(UnsafeRawBufferPointer($0), tag: UInt8(ascii: "t"), to: &bytes) }
            case .blob(let data): data.withUnsafeBytes { appendBytes($0, tag: UInt8(ascii: "b"), to: &bytes) }
            }
        }
    }

    /// The digest of the current row of an SQLite statement whose columns `offset…` are the table's `columns`, read
    /// from SQLite's own buffers (`audit verify` digests every row of policy).
    static func rowDigest(table: String, columns: [String], statement handle: OpaquePointer, offset: Int32) -> String {
        rowDigest(table: table, columns: columns) { index, bytes in
            let column = offset + Int32(index)
            switch sqlite3_column_type(handle, column) {
            case SQLITE_NULL: appendNull(to: &bytes)
            case SQLITE_INTEGER: appendInteger(sqlite3_column_int64(handle, column), to: &bytes)
            case SQLITE_FLOAT: appendReal(sqlite3_column_double(handle, column), to: &bytes)
            case SQLITE_TEXT:
                let text = sqlite3_column_text(handle, column)
                appendBytes(
                    UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), tag: UInt8(ascii: "t"),
                    to: &bytes)
            default:
                let blob = sqlite3_column_blob(handle, column)
                appendBytes(
                    UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(handle, column))), tag: UInt8(ascii: "b"),
                    to: &bytes)
            }
        }
    }

    /// The encoding of a row around its values, which `appendValue` writes (column index, bytes).
    private static func rowDigest(table: String, columns: [String], appendValue: (Int, inout [UInt8]) -> Void) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        bytes.append(contentsOf: "plugboard-row-v1\n".utf8)
        bytes.append(contentsOf: table.utf8)
        bytes.append(10)
        for (index, name) in columns.enumerated() {
            bytes.append(contentsOf: name.utf8)
            bytes.append(UInt8(ascii: "="))
            appendValue(index, &bytes)
            bytes.append(10)
        }
        return SHA256.hash(data: bytes).hex
    }

    private static func appendNull(to bytes: inout [UInt8]) { bytes.append(UInt8(ascii: "-")) }

    private static func appendInteger(_ number: Int64, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "i"))
        bytes.append(UInt8(ascii: ":"))
        bytes.appendDecimal(number)
    }

    private static func appendReal(_ number: Double, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: "r:".utf8)
        bytes.append(contentsOf: String(format: "%.17g", number).utf8)
    }

    /// `t:<length>:<bytes>` or `b:<length>:<bytes>`.
    private static func appendBytes(_ value: UnsafeRawBufferPointer, tag: UInt8, to bytes: inout [UInt8]) {
        bytes.append(tag)
        bytes.append(UInt8(ascii: ":"))
        bytes.appendDecimal(Int64(value.count))
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: value)
    }

    /// The bucket of an entity (0…255).
    static func bucket(_ entity: StateEntity) -> Int {
        var hasher = SHA256()
        hasher.update(data: Array(entity.table.utf8))
        hasher.update(data: [9])
        hasher.update(data: Array(entity.key.utf8))
        return Int(hasher.finalize().withUnsafeBytes { $0[0] })
    }

    /// The hash of one bucket from its entities and digests, sorted here.
    static func bucketHash(_ entries: [(StateEntity, String)]) -> String {
        if entries.isEmpty { return emptyBucket }
        // Entries read in (table, key) order need no sorting; check rather than sort.
        let sorted = zip(entries, entries.dropFirst()).allSatisfy { $0.0 < $1.0 } ? entries : entries.sorted(by: { $0.0 < $1.0 })
        var hasher = SHA256()
        var line: [UInt8] = []
        line.reserveCapacity(256)
        for (entity, digest) in sorted {
            encodeLine(entity.table.utf8, entity.key.utf8, digest.utf8, into: &line)
            hasher.update(data: line)
        }
        return hasher.finalize().hex
    }

    /// A bucket's line, `<table>\t<key>\t<digest>\n`, written over `line` (a buffer the caller reuses).
    static func encodeLine(
        _ table: some Sequence<UInt8>, _ key: some Sequence<UInt8>, _ digest: some Sequence<UInt8>, into line: inout [UInt8]
    ) {
        line.removeAll(keepingCapacity: true)
        line.append(contentsOf: table)
        line.append(9)
        line.append(contentsOf: key)
        line.append(9)
        line.append(contentsOf: digest)
        line.append(10)
    }

    /// The 256 bucket hashes computed as lines arrive, for lines that arrive in each bucket's order (table, then
    /// key, as bytes: the primary-key order of `state_digests`): the same hashes as ``bucketHash(_:)``.
    struct BucketHashers {
        private var hashers = [SHA256](repeating: SHA256(), count: 256)
        private var line: [UInt8] = []

        mutating func add(bucket: Int, table: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer) {
            encodeLine(table, key, digest, into: &line)
            line.withUnsafeBytes { hashers[bucket].update(bufferPointer: $0) }
        }

        /// The hashes, bucket 0 first (an empty bucket hashes nothing, as ``emptyBucket``).
        func finalize() -> [String] { hashers.map { $0.finalize().hex } }
    }

    /// The state root of 256 bucket hashes (bucket 0 first).
    static func root(_ buckets: [String]) -> String {
        var text = "plugboard-state-v1\n"
        for hash in buckets { text += hash + "\n" }
        return SHA256.hex(Data(text.utf8))
    }

    /// The 256 bucket hashes of a whole set of entity digests, bucket 0 first.
    static func bucketHashes(of digests: [StateEntity: String]) -> [String] {
        var buckets = [[(StateEntity, String)]](repeating: [], count: 256)
        for (entity, digest) in digests { buckets[bucket(entity)].append((entity, digest)) }
        return buckets.map(bucketHash)
    }

    /// The `state_changes` text of an audit row: sorted lines `table\tkey\tdigest` (`-` for a removed row).
    static func changesText(_ changes: [StateEntity: String?]) -> String? {
        if changes.isEmpty { return nil }
        return changes.keys.sorted().map { "\($0.table)\t\($0.key)\t\((changes[$0] ?? nil) ?? "-")" }.joined(separator: "\n")
    }

    /// Parses `state_changes`; nil for a malformed text. One pass over the UTF-8 bytes (`audit verify` parses every
    /// audit row's changes).
    static func parseChanges(_ text: String) -> [(StateEntity, String?)]? {
        var text = text
        return text.withUTF8 { bytes -> [(StateEntity, String?)]? in
            var result: [(StateEntity, String?)] = []
            var fields: [String] = []
            fields.reserveCapacity(3)
            var start = 0
            func field(_ end: Int) { fields.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)) }
            for index in 0...bytes.count {
                let byte = index < bytes.count ? bytes[index] : 10
                if byte == 9 {
                    field(index)
                    start = index + 1
                } else if byte == 10 {
                    field(index)
                    start = index + 1
                    guard fields.count == 3 else { return nil }
                    result.append((StateEntity(table: fields[0], key: fields[1]), fields[2] == "-" ? nil : fields[2]))
                    fields.removeAll(keepingCapacity: true)
                }
            }
            return result
        }
    }
}
