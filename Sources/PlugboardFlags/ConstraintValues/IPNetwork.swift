/// An IPv4 or IPv6 address, parsed with the rules of Rust's `std::net::IpAddr` (as Unleash's engine does):
/// dotted-quad IPv4 without leading zeros; IPv6 with at most one `::`, an optional trailing dotted quad, no zone id.
struct IPAddress: Hashable, Sendable {
    /// 4 bytes for IPv4, 16 for IPv6, packed into two words (high first).
    let high: UInt64
    let low: UInt64
    let isV6: Bool

    init?(_ text: String) {
        let bytes = Array(text.utf8)
        if let v4 = Self.parseV4(bytes[...]) {
            high = 0
            low = UInt64(v4)
            isV6 = false
        } else if let v6 = Self.parseV6(bytes) {
            high = v6.0
            low = v6.1
            isV6 = true
        } else {
            return nil
        }
    }

    static func parseV4(_ bytes: ArraySlice<UInt8>) -> UInt32? {
        let parts = bytes.split(separator: 0x2E, omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            if part.count > 1, part.first == 0x30 { return nil }
            let octet = part.reduce(0) { $0 * 10 + UInt32($1 - 0x30) }
            guard octet <= 255 else { return nil }
            value = value << 8 | octet
        }
        return value
    }

    private static func parseGroups(_ bytes: ArraySlice<UInt8>, limit: Int) -> [UInt16]? {
        // Groups of 1-4 hex digits separated by ':'; a dotted quad may take the last two slots.
        if bytes.isEmpty { return [] }
        var groups: [UInt16] = []
        let parts = bytes.split(separator: 0x3A, omittingEmptySubsequences: false)
        for (index, part) in parts.enumerated() {
            if index == parts.count - 1, part.contains(0x2E) {
                guard let v4 = parseV4(part) else { return nil }
                groups.append(UInt16(v4 >> 16))
                groups.append(UInt16(v4 & 0xFFFF))
                continue
            }
            guard (1...4).contains(part.count), let value = UInt16(String(decoding: part, as: UTF8.self), radix: 16),
                part.allSatisfy({ isHexDigit($0) })
            else { return nil }
            groups.append(value)
        }
        return groups.count <= limit ? groups : nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    static func parseV6(_ bytes: [UInt8]) -> (UInt64, UInt64)? {
        guard bytes.count >= 2, bytes.count <= 45 else { return nil }
        var groups: [UInt16]
        if let gap = findDoubleColon(bytes) {
            let head = bytes[..<gap]
            let tail = bytes[(gap + 2)...]
            if tail.firstRange(of: [0x3A, 0x3A]) != nil { return nil }
            guard let headGroups = parseGroups(head, limit: 7), !head.contains(0x2E) || head.isEmpty,
                let tailGroups = parseGroups(tail, limit: 7 - headGroups.count)
            else { return nil }
            groups = headGroups + Array(repeating: 0, count: 8 - headGroups.count - tailGroups.count) + tailGroups
        } else {
            guard let all = parseGroups(bytes[...], limit: 8), all.count == 8 else { return nil }
            groups = all
        }
        guard groups.count == 8 else { return nil }
        let high = groups[0..<4].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        let low = groups[4..<8].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        return (high, low)
    }

    private static func findDoubleColon(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for index in 0..<(bytes.count - 1) where bytes[index] == 0x3A && bytes[index + 1] == 0x3A { return index }
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
        guard pieces.count <= 2, let address = IPAddress(String(pieces[0])) else { return nil }
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
