/// A context's properties kept beside their dictionary as a short list of entries with each name's
/// ``NameTable/wordHash(_:)``, built when the properties are set: the evaluator finds a property by comparing hashes, then confirms the name, without
/// hashing the name with SipHash or iterating the dictionary (which copies every key and value it passes). As in
/// Unleash's engine, a name matches only the same bytes.
final class PropertyIndex: @unchecked Sendable {
    struct Entry {
        let hash: UInt32
        let name: String
        let value: String
    }

    /// The properties as given.
    let properties: [String: String]
    /// The entries, valid while this index lives.
    let entries: UnsafeMutablePointer<Entry>
    let count: Int

    static let empty = PropertyIndex(building: [:])

    /// The index of `properties`; no properties share ``empty``, so a context without any allocates nothing.
    static func of(_ properties: [String: String]) -> PropertyIndex {
        properties.isEmpty ? empty : PropertyIndex(building: properties)
    }

    private init(building properties: [String: String]) {
        self.properties = properties
        count = properties.count
        entries = .allocate(capacity: max(1, properties.count))
        for (offset, (name, value)) in properties.enumerated() {
            var name = name
            let hash = name.withUTF8 { NameTable.wordHash(UnsafeRawBufferPointer($0)) }
            (entries + offset).initialize(to: Entry(hash: hash, name: name, value: value))
        }
    }

    deinit {
        entries.deinitialize(count: count)
        entries.deallocate()
    }

    /// The value of the property `name`, whose ``NameTable/wordHash(_:)`` is `hash`.
    @inline(__always)
    func value(of name: String, hash: UInt32) -> String? { Self.value(of: name, hash: hash, in: entries, count: count) }

    /// The value of the property `name`, whose ``NameTable/wordHash(_:)`` is `hash`, among `count` entries at
    /// `entries` (read without holding the index, for an evaluation that holds its context).
    @inline(__always)
    static func value(of name: String, hash: UInt32, in entries: UnsafePointer<Entry>, count: Int) -> String? {
        var index = 0
        while index < count {
            // Equal hashes of the bytes, then `==` confirms (at once for two equal small strings).
            if entries[index].hash == hash, entries[index].name == name { return entries[index].value }
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
