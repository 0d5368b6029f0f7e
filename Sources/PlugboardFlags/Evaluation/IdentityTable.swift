/// Flag positions by the two machine words a `String` is made of, checked before ``NameTable``: a name of up to 15
/// UTF-8 bytes is stored inside those words, so an app's literal `"new-checkout"` has the same words as the name
/// this table keeps, and is found without reading, hashing or comparing its bytes.
///
/// Equal words are the same string: for a small string the words are its bytes and count, for a larger one they hold
/// a reference to its storage, which the table keeps alive (``names``), so no other string can have it. A name not
/// found here is looked up by its bytes, so a string that is equal but built differently still finds its flag.
struct IdentityTable: @unchecked Sendable {
    private struct Slot {
        var low: UInt64
        var high: UInt64
        var position: Int32
    }

    private let slots: UnsafeMutablePointer<Slot>
    private let mask: Int
    /// The names whose words are in `slots`, kept alive while the table is.
    private let names: [String]

    init(_ entries: [(name: String, position: Int32)]) {
        var capacity = 8
        while capacity < entries.count * 2 { capacity *= 2 }
        mask = capacity - 1
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: Slot(low: 0, high: 0, position: -1), count: capacity)
        var names: [String] = []
        for entry in entries {
            // Rebuilt from its bytes, so that a short name is in its inline form, as a literal is.
            let name = String(decoding: Array(entry.name.utf8), as: UTF8.self)
            names.append(name)
            let (low, high) = Self.words(of: name)
            var slot = Self.slot(low, high, mask)
            while slots[slot].position >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Slot(low: low, high: high, position: entry.position)
        }
        self.names = names
    }

    /// The position stored for the string with exactly `name`'s words, or -1 when there is none.
    @inline(__always)
    func find(_ name: String) -> Int32 {
        let (low, high) = Self.words(of: name)
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
