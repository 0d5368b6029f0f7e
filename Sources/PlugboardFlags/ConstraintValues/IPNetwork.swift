/// An IPv4 or IPv6 address, parsed with the rules of Rust's `std::net::IpAddr` (as Unleash's engine does):
/// dotted-quad IPv4 without leading zeros; IPv6 with at most one `::`, an optional trailing dotted quad, no zone id.
struct IPAddress: Hashable, Sendable {
    /// 4 bytes for IPv4, 16 for IPv6, packed into two words (high first).
    let high: UInt64
    let low: UInt64
    let isV6: Bool

    init?(_ text: String) {
        var text = text
        // `withUTF8` on a native string reads its bytes in place; parsing allocates nothing.
        guard let parsed = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    init?(_ text: Substring) {
        var text = text
        guard let parsed = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    /// Parses UTF-8 text.
    init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard let parsed = Self.parse(bytes) else { return nil }
        self = parsed
    }

    private init(high: UInt64, low: UInt64, isV6: Bool) {
        self.high = high
        self.low = low
        self.isV6 = isV6
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> IPAddress? {
        if let v4 = parseV4(bytes) { return IPAddress(high: 0, low: UInt64(v4), isV6: false) }
        guard let v6 = parseV6(bytes) else { return nil }
        return IPAddress(high: UInt64(truncatingIfNeeded: v6 >> 64), low: UInt64(truncatingIfNeeded: v6), isV6: true)
    }

    /// Four decimal octets separated by `.`, each 1–3 digits without a leading zero and at most 255.
    static func parseV4(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> UInt32? { parseV4(UnsafeBufferPointer(rebasing: bytes)) }

    /// The same, read through a pointer octet by octet: every context with an IPv4 address comes here, so it does
    /// no more checks than the grammar needs.
    static func parseV4(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        // "0.0.0.0" to "255.255.255.255".
        guard bytes.count >= 7, bytes.count <= 15, var cursor = bytes.baseAddress else { return nil }
        let end = cursor + bytes.count
        var value: UInt32 = 0
        var part = 0
        while true {
            guard cursor < end else { return nil }
            let first = cursor.pointee &- 0x30
            guard first < 10 else { return nil }
            cursor += 1
            var octet = UInt32(first)
            // A leading zero is the whole octet; otherwise up to two more digits.
            if first != 0, cursor < end, case let second = cursor.pointee &- 0x30, second < 10 {
                octet = octet &* 10 &+ UInt32(second)
                cursor += 1
                if cursor < end, case let third = cursor.pointee &- 0x30, third < 10 {
                    octet = octet &* 10 &+ UInt32(third)
                    cursor += 1
                    guard octet <= 255 else { return nil }
                }
            }
            value = value << 8 | octet
            part += 1
            if part == 4 { return cursor == end ? value : nil }
            guard cursor < end, cursor.pointee == 0x2E else { return nil }
            cursor += 1
        }
    }

    /// Groups of 1–4 hex digits separated by `:`, a dotted quad allowed as the last two; at most `limit` groups.
    /// Returns the groups packed into the low bits (the last group lowest) and how many there are.
    private static func parseGroups(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, limit: Int) -> (UInt128, Int)? {
        if bytes.isEmpty { return (0, 0) }
        var value: UInt128 = 0
        var count = 0
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(of: 0x3A) ?? bytes.endIndex
            let part = bytes[start..<end]
            if end == bytes.endIndex, part.contains(0x2E) {
                guard let v4 = parseV4(part) else { return nil }
                value = value << 32 | UInt128(v4)
                count += 2
            } else {
                guard (1...4).contains(part.count) else { return nil }
                var group: UInt128 = 0
                for byte in part {
                    guard let digit = hexValue(byte) else { return nil }
                    group = group << 4 | UInt128(digit)
                }
                value = value << 16 | group
                count += 1
            }
            guard count <= limit else { return nil }
            if end == bytes.endIndex { return (value, count) }
            start = end + 1
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// An IPv6 address as one 128-bit number.
    static func parseV6(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt128? {
        guard bytes.count >= 2, bytes.count <= 45 else { return nil }
        if let gap = findDoubleColon(bytes[...]) {
            let head = bytes[..<gap]
            let tail = bytes[(gap + 2)...]
            if findDoubleColon(tail) != nil { return nil }
            guard head.isEmpty || !head.contains(0x2E), let (headValue, headCount) = parseGroups(head, limit: 7),
                let (tailValue, tailCount) = parseGroups(tail, limit: 7 - headCount)
            else { return nil }
            _ = tailCount
            return headCount == 0 ? tailValue : headValue << UInt128(16 * (8 - headCount)) | tailValue
        }
        guard let (value, count) = parseGroups(bytes[...], limit: 8), count == 8 else { return nil }
        return value
    }

    private static func findDoubleColon(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for index in bytes.startIndex..<(bytes.endIndex - 1) where bytes[index] == 0x3A && bytes[index + 1] == 0x3A { return index }
        return nil
    }
}

/// An address range in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`) or a single address, parsed like Rust's
/// `ipnetwork` crate: one optional `/prefix` (decimal, at most 32 or 128), host bits allowed, no whitespace.
struct IPNetwork: Hashable, Sendable {
    let address: IPAddress
    let prefix: Int

    init?(_ text: String) {
        let pieces = text.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count <= 2, let address = IPAddress(pieces[0]) else { return nil }
        let maximum = address.isV6 ? 128 : 32
        if pieces.count == 2 {
            guard let prefix = UnleashNumber.parsePercentage(String(pieces[1])), prefix <= maximum else { return nil }
            self.prefix = Int(prefix)
        } else {
            prefix = maximum
        }
        self.address = address
    }

    /// Whether `candidate` is inside the range (addresses of the other IP family never are).
    func contains(_ candidate: IPAddress) -> Bool {
        guard candidate.isV6 == address.isV6 else { return false }
        if !address.isV6 {
            guard prefix > 0 else { return true }
            let mask: UInt64 = (0xFFFF_FFFF << UInt64(32 - prefix)) & 0xFFFF_FFFF
            return candidate.low & mask == address.low & mask
        }
        func mask(_ bits: Int) -> UInt64 { bits <= 0 ? 0 : bits >= 64 ? .max : ~UInt64(0) << UInt64(64 - bits) }
        let highMask = mask(prefix)
        let lowMask = mask(prefix - 64)
        return candidate.high & highMask == address.high & highMask && candidate.low & lowMask == address.low & lowMask
    }
}
