import Crypto
import Foundation
import GRDB
import GRDBSQLite
import PlugboardModel

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
    /// ``emptyBucket`` as UTF-8.
    static let emptyBucketBytes = Array(emptyBucket.utf8)

    /// The digest of the current row of an SQLite statement whose columns `offset…` are the table's `columns`, read
    /// from SQLite's own buffers (one row proven, or every row of policy for `audit verify`).
    static func rowDigest(table: String, columns: [String], statement handle: OpaquePointer, offset: Int32) -> String {
        var encoder = RowEncoder()
        encoder.append("plugboard-row-v1\n".utf8)
        encoder.append(table.utf8)
        encoder.append(10)
        for (index, name) in columns.enumerated() {
            encoder.append(name.utf8)
            encoder.append(UInt8(ascii: "="))
            let column = offset + Int32(index)
            switch sqlite3_column_type(handle, column) {
            case SQLITE_NULL: encoder.append(UInt8(ascii: "-"))
            case SQLITE_INTEGER:
                encoder.append("i:".utf8)
                encoder.bytes.appendDecimal(sqlite3_column_int64(handle, column))
            case SQLITE_FLOAT:
                encoder.append("r:".utf8)
                encoder.append(String(format: "%.17g", sqlite3_column_double(handle, column)).utf8)
            case SQLITE_TEXT:
                let text = sqlite3_column_text(handle, column)
                encoder.appendValue(
                    UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), tag: UInt8(ascii: "t"))
            default:
                let blob = sqlite3_column_blob(handle, column)
                encoder.appendValue(
                    UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(handle, column))), tag: UInt8(ascii: "b"))
            }
            encoder.append(10)
        }
        return encoder.finalize()
    }

    /// The encoding of a row fed to SHA-256: short pieces gather in a buffer, a long value goes to the hash where it
    /// lies (a sealed value of a megabyte is not copied).
    private struct RowEncoder {
        var hasher = SHA256()
        var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(256) }

        mutating func append(_ byte: UInt8) { bytes.append(byte) }
        mutating func append(_ piece: some Sequence<UInt8>) { bytes.append(contentsOf: piece) }

        /// `t:<length>:<bytes>` or `b:<length>:<bytes>`.
        mutating func appendValue(_ value: UnsafeRawBufferPointer, tag: UInt8) {
            bytes.append(tag)
            bytes.append(UInt8(ascii: ":"))
            bytes.appendDecimal(Int64(value.count))
            bytes.append(UInt8(ascii: ":"))
            if value.count <= 4096 {
                bytes.append(contentsOf: value)
            } else {
                hasher.update(data: bytes)
                bytes.removeAll(keepingCapacity: true)
                hasher.update(bufferPointer: value)
            }
        }

        consuming func finalize() -> String {
            hasher.update(data: bytes)
            return hasher.finalize().hex
        }
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
        // Entries read in (table, key) order need no sorting; check rather than sort.
        let sorted = zip(entries, entries.dropFirst()).allSatisfy { $0.0 < $1.0 } ? entries : entries.sorted(by: { $0.0 < $1.0 })
        var hasher = BucketHasher()
        for (entity, digest) in sorted { hasher.add(table: entity.table.utf8, key: entity.key.utf8, digest: digest.utf8) }
        return hasher.finalize()
    }

    /// The hash of one bucket, fed its lines `<table>\t<key>\t<digest>\n` in the bucket's order (table, then key, as
    /// bytes). A bucket without lines hashes to ``emptyBucket``.
    struct BucketHasher {
        private var hasher = SHA256()
        /// The line being hashed, a buffer reused from line to line.
        private var line: [UInt8] = []

        mutating func add(table: some Sequence<UInt8>, key: some Sequence<UInt8>, digest: some Sequence<UInt8>) {
            line.removeAll(keepingCapacity: true)
            StateDigest.appendLine(to: &line, table: table, key: key, digest: digest)
            line.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        }

        func finalize() -> String { hasher.finalize().hex }
    }

    /// Appends an entity's line `<table>\t<key>\t<digest>\n` to `bytes`.
    static func appendLine(
        to bytes: inout [UInt8], table: some Sequence<UInt8>, key: some Sequence<UInt8>, digest: some Sequence<UInt8>
    ) {
        bytes.append(contentsOf: table)
        bytes.append(9)
        bytes.append(contentsOf: key)
        bytes.append(9)
        bytes.append(contentsOf: digest)
        bytes.append(10)
    }

    /// The lines of one bucket of the index in its order (table, then key, as bytes), kept between a connection's
    /// changes (``StateCache``) so that a change rehashes the buckets it touched from memory: on a board of 10,000
    /// plug-ins a bucket holds about 150 entries, and reading one back from the index cost a write 150 lookups of a
    /// digest. The lines lie in one buffer, as the bucket's hash takes them.
    struct BucketEntries: Sendable {
        /// `<table>\t<key>\t<digest>\n` for each entry, in order.
        private var bytes: [UInt8] = []
        /// Where each line starts in ``bytes``, with the byte counts of its table and key.
        private var lines: [(start: Int, table: Int, key: Int)] = []

        /// Appends a line; lines must come in the bucket's order (``StateQueries/indexedBucket(_:_:)``).
        mutating func append(table: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer) {
            lines.append((bytes.count, table.count, key.count))
            StateDigest.appendLine(to: &bytes, table: table, key: key, digest: digest)
        }

        /// Sets the digest of `entity`'s line, or removes the line (`nil`), keeping the order.
        mutating func set(_ entity: StateEntity, _ digest: String?) {
            let table = Array(entity.table.utf8)
            let key = Array(entity.key.utf8)
            // The first line not before (table, key).
            var low = 0
            var high = lines.count
            while low < high {
                let middle = (low + high) / 2
                if precedes(line: middle, table: table, key: key) { low = middle + 1 } else { high = middle }
            }
            let found = low < lines.count && matches(line: low, table: table, key: key)
            var line: [UInt8] = []
            if let digest {
                line.reserveCapacity(table.count + key.count + digest.utf8.count + 3)
                StateDigest.appendLine(to: &line, table: table, key: key, digest: digest.utf8)
            }
            let start = low < lines.count ? lines[low].start : bytes.count
            let end = found ? (low + 1 < lines.count ? lines[low + 1].start : bytes.count) : start
            bytes.replaceSubrange(start..<end, with: line)
            let shift = line.count - (end - start)
            for index in (found ? low + 1 : low)..<lines.count { lines[index].start += shift }
            switch (found, digest == nil) {
            case (true, true): lines.remove(at: low)
            case (false, false): lines.insert((start, table.count, key.count), at: low)
            default: break
            }
        }

        /// The bucket's hash: SHA-256 of its lines (``emptyBucket`` without lines).
        var hash: String { SHA256.hash(data: bytes).hex }

        private func precedes(line index: Int, table: [UInt8], key: [UInt8]) -> Bool {
            let line = lines[index]
            let lineTable = bytes[line.start..<line.start + line.table]
            if !lineTable.elementsEqual(table) { return lineTable.lexicographicallyPrecedes(table) }
            return bytes[line.start + line.table + 1..<line.start + line.table + 1 + line.key].lexicographicallyPrecedes(key)
        }

        private func matches(line index: Int, table: [UInt8], key: [UInt8]) -> Bool {
            let line = lines[index]
            return bytes[line.start..<line.start + line.table].elementsEqual(table)
                && bytes[line.start + line.table + 1..<line.start + line.table + 1 + line.key].elementsEqual(key)
        }
    }

    /// The 256 bucket hashes computed as lines arrive, for lines that arrive in each bucket's order (table, then
    /// key, as bytes: the primary-key order of `state_digests`): the same hashes as ``bucketHash(_:)``.
    struct BucketHashers {
        private var hashers = [BucketHasher](repeating: BucketHasher(), count: 256)

        mutating func add(bucket: Int, table: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer) {
            hashers[bucket].add(table: table, key: key, digest: digest)
        }

        /// The hashes, bucket 0 first (an empty bucket hashes nothing, as ``emptyBucket``).
        func finalize() -> [String] { hashers.map { $0.finalize() } }
    }

    /// The state root of 256 bucket hashes (bucket 0 first).
    static func root(_ buckets: [String]) -> String {
        var hasher = RootHasher()
        for var hash in buckets { hash.withUTF8 { hasher.add(UnsafeRawBufferPointer($0)) } }
        return hasher.finalize()
    }

    /// The 256 bucket hashes as the state root hashes them, in one buffer: each hash's 64 hex digits and a line feed,
    /// bucket 0 first. A change replaces the hashes of the buckets it touched and hashes the buffer once.
    ///
    /// A stored hash of another length than 64 bytes (an edit behind the board's back: SQLite's `length` counts
    /// characters, not bytes, and its checks can be turned off) takes its line as 64 `?`, which no hex digest has: the
    /// lines keep their places, and the root matches no recorded root, as the root of such stored hashes never could.
    struct BucketLines: Sendable {
        private static let lineLength = 65
        private var bytes: [UInt8]

        /// The lines of hashes read in bucket order (``StateQueries/forEachBucketHash(_:_:)``).
        init(reading forEach: ((UnsafeRawBufferPointer) -> Void) throws -> Void) rethrows {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(256 * Self.lineLength)
            try forEach { hash in
                if hash.count == 64 {
                    bytes.append(contentsOf: hash)
                } else {
                    bytes.append(contentsOf: repeatElement(UInt8(ascii: "?"), count: 64))
                }
                bytes.append(10)
            }
            self.bytes = bytes
        }

        /// Replaces the hash of `bucket` (64 hex digits, as ``StateQueries/indexedBucketHash(_:_:)`` makes it).
        mutating func set(_ bucket: Int, _ hash: String) {
            precondition(hash.utf8.count == 64, "a bucket hash is 64 hex digits")
            bytes.replaceSubrange(bucket * Self.lineLength..<bucket * Self.lineLength + 64, with: hash.utf8)
        }

        /// The state root: the same as ``StateDigest/root(_:)`` of the 256 hashes.
        var root: String {
            var hasher = RootHasher()
            bytes.withUnsafeBytes { hasher.add(lines: $0) }
            return hasher.finalize()
        }
    }

    /// The state root computed as the bucket hashes arrive, bucket 0 first.
    struct RootHasher {
        private var hasher = SHA256()

        init() { hasher.update(data: Array("plugboard-state-v1\n".utf8)) }

        /// Adds the next bucket's hash (64 hex digits).
        mutating func add(_ hash: UnsafeRawBufferPointer) {
            hasher.update(bufferPointer: hash)
            hasher.update(data: [10])
        }

        /// Adds the next buckets' hashes already written as lines, each hash followed by its line feed.
        mutating func add(lines: UnsafeRawBufferPointer) {
            hasher.update(bufferPointer: lines)
        }

        func finalize() -> String { hasher.finalize().hex }
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
