/// A context's properties kept beside their dictionary as a short list of entries with each name's
/// ``NameTable/wordHash(_:)``, built when the properties are set: the evaluator finds a property by comparing hashes, then confirms the name, without
/// hashing the name with SipHash or iterating the dictionary (which copies every key and value it passes). As in
/// Unleash's engine, a name matches only the same bytes.
final class PropertyIndex: @unchecked Sendable {
    struct Entry {
        let hash: UInt32
        let name: String
        let value: String
        /// The value's UTF-8, in the index's own buffer: an evaluation reads it without retaining the string.
        let bytes: UnsafePointer<UInt8>
        let byteCount: Int

        /// The value's UTF-8, valid while the index lives.
        var utf8: UnsafeBufferPointer<UInt8> {
            @inline(__always) get { UnsafeBufferPointer(start: bytes, count: byteCount) }
        }
    }

    /// The properties as given.
    let properties: [String: String]
    /// The entries, valid while this index lives.
    let entries: UnsafeMutablePointer<Entry>
    let count: Int
    /// The values' UTF-8, one after another.
    private let valueBytes: UnsafeMutablePointer<UInt8>

    static let empty = PropertyIndex(building: [:])

    /// The index of `properties`; no properties share ``empty``, so a context without any allocates nothing.
    static func of(_ properties: [String: String]) -> PropertyIndex {
        properties.isEmpty ? empty : PropertyIndex(building: properties)
    }

    private init(building properties: [String: String]) {
        self.properties = properties
        count = properties.count
        entries = .allocate(capacity: max(1, properties.count))
        valueBytes = .allocate(capacity: max(1, properties.values.reduce(0) { $0 + $1.utf8.count }))
        var next = valueBytes
        for (offset, (name, value)) in properties.enumerated() {
            var name = name
            let hash = name.withUTF8 { NameTable.wordHash(UnsafeRawBufferPointer($0)) }
            let byteCount = UnsafeMutableBufferPointer(start: next, count: value.utf8.count).initialize(from: value.utf8).1
            (entries + offset).initialize(to: Entry(hash: hash, name: name, value: value, bytes: next, byteCount: byteCount))
            next += byteCount
        }
    }

    deinit {
        entries.deinitialize(count: count)
        entries.deallocate()
        valueBytes.deallocate()
    }

    /// The value of the property `name`, whose ``NameTable/wordHash(_:)`` is `hash`.
    @inline(__always)
    func value(of name: String, hash: UInt32) -> String? { Self.value(of: name, hash: hash, in: entries, count: count) }

    /// The value of the property `name`, whose ``NameTable/wordHash(_:)`` is `hash`, among `count` entries at
    /// `entries` (read without holding the index, for an evaluation that holds its context).
    @inline(__always)
    static func value(of name: String, hash: UInt32, in entries: UnsafePointer<Entry>, count: Int) -> String? {
        entry(of: name, hash: hash, in: entries, count: count)?.pointee.value
    }

    /// The entry of the property `name`, whose ``NameTable/wordHash(_:)`` is `hash`, among `count` entries at
    /// `entries`, or `nil`.
    @inline(__always)
    static func entry(of name: String, hash: UInt32, in entries: UnsafePointer<Entry>, count: Int) -> UnsafePointer<Entry>? {
        var index = 0
        while index < count {
            // Equal hashes of the bytes, then `==` confirms (at once for two equal small strings).
            if entries[index].hash == hash, entries[index].name == name { return entries + index }
            index += 1
        }
        return nil
    }

    /// The value of the property `name`, hashing the name first.
    func value(of name: String) -> String? {
        var name = name
        let hash = name.withUTF8 { NameTable.wordHash(UnsafeRawBufferPointer($0)) }
        return value(of: name, hash: hash)
    }
}
