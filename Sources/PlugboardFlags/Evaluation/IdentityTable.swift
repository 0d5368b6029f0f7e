/// Flag positions of the names of up to 15 UTF-8 bytes by the two machine words of their `String`, checked before
/// ``NameTable``: such a string is stored inside those words (its bytes and count, with the small-string bit set), so
/// an app's literal `"new-checkout"` has the same words as the name this table keeps, and is found without reading,
/// hashing or comparing its bytes. Equal words of a small string are the same string.
///
/// A longer name, or one not found here, is looked up by its bytes, so a string that is equal but built differently
/// still finds its flag.
struct IdentityTable: @unchecked Sendable {
    private struct Slot {
        var low: UInt64
        var high: UInt64
        var position: Int32
    }

    private let slots: UnsafeMutablePointer<Slot>
    private let mask: Int
    /// The bit of a `String`'s second word that marks a small string (its bytes inside its two words).
    private static let smallBit: UInt64 = 1 << 61

    init(_ entries: [(name: String, position: Int32)]) {
        var capacity = 8
        while capacity < entries.count * 2 { capacity *= 2 }
        mask = capacity - 1
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: Slot(low: 0, high: 0, position: -1), count: capacity)
        for entry in entries {
            // Rebuilt from its bytes, so that a short name is in its small form, as a literal is.
            let name = String(decoding: Array(entry.name.utf8), as: UTF8.self)
            let (low, high) = Self.words(of: name)
            guard high & Self.smallBit != 0 else { continue }
            var slot = Self.slot(low, high, mask)
            while slots[slot].position >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Slot(low: low, high: high, position: entry.position)
        }
    }

    /// The position stored for the small string with exactly `name`'s words, or -1 when there is none.
    @inline(__always)
    func find(_ name: String) -> Int32 {
        let (low, high) = Self.words(of: name)
        guard high & Self.smallBit != 0 else { return -1 }
        var slot = Self.slot(low, high, mask)
        while true {
            let candidate = slots[slot]
            if candidate.position < 0 { return -1 }
            if candidate.low == low, candidate.high == high { return candidate.position }
            slot = (slot + 1) & mask
        }
    }

    @inline(__always)
    private static func words(of name: String) -> (UInt64, UInt64) { unsafeBitCast(name, to: (UInt64, UInt64).self) }

    @inline(__always)
    private static func slot(_ low: UInt64, _ high: UInt64, _ mask: Int) -> Int {
        let mixed = (low ^ (high &* 0x9E37_79B9_7F4A_7C15)) &* 0xFF51_AFD7_ED55_8CCD
        return Int(truncatingIfNeeded: mixed >> 40) & mask
    }

    func free() { slots.deallocate() }
}
