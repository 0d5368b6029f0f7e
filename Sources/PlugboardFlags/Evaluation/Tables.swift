import Foundation

/// A fixed buffer of elements, freed by its owner (``FlagProgram``'s `deinit`).
///
/// The subscript is an addressor: `table[i].member` reads the element where it lies, so reading a record, or calling
/// a method on a string or a set, neither copies it nor retains it.
struct Table<Element>: @unchecked Sendable {
    private let base: UnsafeMutablePointer<Element>
    let count: Int

    init(_ elements: [Element]) {
        count = elements.count
        base = .allocate(capacity: max(1, elements.count))
        _ = UnsafeMutableBufferPointer(start: base, count: elements.count).initialize(from: elements)
    }

    subscript(index: Int32) -> Element {
        @inline(__always) unsafeAddress { UnsafePointer(base + Int(index)) }
    }

    func free() {
        base.deinitialize(count: count)
        base.deallocate()
    }
}

/// An open-addressing table from names (their UTF-8 bytes) to flag positions: the hash is MurmurHash3 over the
/// bytes in place, which is several times cheaper than a `Dictionary<String, Int>`'s SipHash of a `String`.
struct NameTable: @unchecked Sendable {
    private struct Slot {
        var hash: UInt32
        var position: Int32
        var offset: Int32
        var count: Int32
    }

    private let slots: UnsafeMutablePointer<Slot>
    private let mask: Int
    private let bytes: UnsafeMutableRawPointer

    init(_ entries: [(name: String, position: Int32)]) {
        var capacity = 8
        while capacity < entries.count * 2 { capacity *= 2 }
        mask = capacity - 1
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: Slot(hash: 0, position: -1, offset: 0, count: 0), count: capacity)
        let total = entries.reduce(0) { $0 + $1.name.utf8.count }
        bytes = .allocate(byteCount: max(1, total), alignment: 1)
        var offset = 0
        for entry in entries {
            var name = entry.name
            let hash = name.withUTF8 { utf8 in
                if !utf8.isEmpty { (bytes + offset).copyMemory(from: utf8.baseAddress!, byteCount: utf8.count) }
                return MurmurHash3.hash(UnsafeRawBufferPointer(utf8), seed: 0)
            }
            var slot = Int(hash) & mask
            while slots[slot].position >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Slot(hash: hash, position: entry.position, offset: Int32(offset), count: Int32(name.utf8.count))
            offset += name.utf8.count
        }
    }

    /// Whether `name` is in the table.
    @inline(__always)
    func contains(_ name: String) -> Bool { find(name) >= 0 }

    /// The position stored for `name`, or -1.
    @inline(__always)
    func find(_ name: String) -> Int32 {
        if let found = name.utf8.withContiguousStorageIfAvailable({ find(UnsafeRawBufferPointer($0)) }) { return found }
        var copy = name
        copy.makeContiguousUTF8()
        return find(copy)
    }

    private func find(_ name: UnsafeRawBufferPointer) -> Int32 {
        let hash = MurmurHash3.hash(name, seed: 0)
        var slot = Int(hash) & mask
        while true {
            let candidate = slots[slot]
            if candidate.position < 0 { return -1 }
            if candidate.hash == hash, Int(candidate.count) == name.count,
                name.isEmpty || memcmp(bytes + Int(candidate.offset), name.baseAddress!, name.count) == 0
            {
                return candidate.position
            }
            slot = (slot + 1) & mask
        }
    }

    func free() {
        slots.deallocate()
        bytes.deallocate()
    }
}
