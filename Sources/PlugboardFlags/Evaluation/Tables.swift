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

/// An open-addressing table from names (their UTF-8 bytes) to flag positions: the hash reads the bytes in place
/// eight at a time (``wordHash(_:)``), which is several times cheaper than a `Dictionary<String, Int>`'s SipHash of
/// a `String`, or MurmurHash3's byte-by-byte tail.
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
                return Self.wordHash(UnsafeRawBufferPointer(utf8))
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

    /// The position stored for the name whose UTF-8 is `name`, or -1.
    @inline(__always)
    func find(_ name: UnsafeRawBufferPointer) -> Int32 {
        let hash = Self.wordHash(name)
        var slot = Int(hash) & mask
        while true {
            let candidate = slots[slot]
            if candidate.position < 0 { return -1 }
            if candidate.hash == hash, Int(candidate.count) == name.count, Self.sameBytes(bytes + Int(candidate.offset), name) {
                return candidate.position
            }
            slot = (slot + 1) & mask
        }
    }

    /// Whether the `name.count` bytes at `stored` are `name`'s: up to 16 bytes as two overlapping words (names are
    /// short), longer ones with `memcmp`.
    @inline(__always)
    private static func sameBytes(_ stored: UnsafeRawPointer, _ name: UnsafeRawBufferPointer) -> Bool {
        let count = name.count
        guard count > 0, let base = name.baseAddress else { return true }
        if count >= 8, count <= 16 {
            return stored.loadUnaligned(as: UInt64.self) == base.loadUnaligned(as: UInt64.self)
                && stored.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                    == base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        }
        if count >= 4, count < 8 {
            return stored.loadUnaligned(as: UInt32.self) == base.loadUnaligned(as: UInt32.self)
                && stored.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                    == base.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
        }
        if count < 4 {
            return stored.load(as: UInt8.self) == base.load(as: UInt8.self)
                && stored.load(fromByteOffset: count / 2, as: UInt8.self) == base.load(fromByteOffset: count / 2, as: UInt8.self)
                && stored.load(fromByteOffset: count - 1, as: UInt8.self) == base.load(fromByteOffset: count - 1, as: UInt8.self)
        }
        return memcmp(stored, base, count) == 0
    }

    /// A hash of `bytes` that reads them as at most a few unaligned words (names are short): lengths 8 and over
    /// read each eight bytes and the last eight, 4 to 7 the first and last four, 1 to 3 three single bytes.
    @inline(__always)
    static func wordHash(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        let count = bytes.count
        var state = UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
        @inline(__always) func mix(_ word: UInt64) {
            state = (state ^ word) &* 0xFF51_AFD7_ED55_8CCD
            state ^= state >> 29
        }
        guard count > 0, let base = bytes.baseAddress else { return 0 }
        if count >= 8 {
            var offset = 0
            while offset + 8 < count {
                mix(base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            mix(base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        } else if count >= 4 {
            let low = UInt64(base.loadUnaligned(as: UInt32.self))
            let high = UInt64(base.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            mix(low | high << 32)
        } else {
            let first = UInt64(base.load(as: UInt8.self))
            let middle = UInt64(base.load(fromByteOffset: count / 2, as: UInt8.self))
            let last = UInt64(base.load(fromByteOffset: count - 1, as: UInt8.self))
            mix(first | middle << 8 | last << 16)
        }
        state = (state ^ (state >> 32)) &* 0xC4CE_B9FE_1A85_EC53
        return UInt32(truncatingIfNeeded: state >> 29)
    }

    func free() {
        slots.deallocate()
        bytes.deallocate()
    }
}

/// Strings kept as their UTF-8 bytes in one buffer, each read in place by index (no `String` to open per read).
struct ByteStrings: @unchecked Sendable {
    private struct Span {
        var offset: Int
        var count: Int
    }

    private let spans: UnsafeMutablePointer<Span>
    private let bytes: UnsafeMutablePointer<UInt8>

    init(_ strings: [String]) {
        spans = .allocate(capacity: max(1, strings.count))
        bytes = .allocate(capacity: max(1, strings.reduce(0) { $0 + $1.utf8.count }))
        var offset = 0
        for (index, string) in strings.enumerated() {
            let count = string.utf8.count
            _ = UnsafeMutableBufferPointer(start: bytes + offset, count: count).initialize(from: string.utf8)
            spans[index] = Span(offset: offset, count: count)
            offset += count
        }
    }

    /// The bytes of string `index`, valid while the owner lives.
    subscript(index: Int32) -> UnsafeBufferPointer<UInt8> {
        @inline(__always) get {
            let span = spans[Int(index)]
            return UnsafeBufferPointer(start: bytes + span.offset, count: span.count)
        }
    }

    func free() {
        spans.deallocate()
        bytes.deallocate()
    }
}
