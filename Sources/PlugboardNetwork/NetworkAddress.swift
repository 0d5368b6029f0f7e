#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an IP address points, as far as calling a provider is concerned.
public enum AddressScope: String, Sendable, Equatable {
    /// A public address: always callable.
    case global
    /// 127.0.0.0/8, `::1`: this machine.
    case loopback
    /// 10/8, 172.16/12, 192.168/16: a private network.
    case privateNetwork
    /// 169.254/16 (cloud metadata services live there), fe80::/10.
    case linkLocal
    /// 100.64/10, carrier-grade NAT.
    case sharedAddressSpace
    /// fc00::/7, IPv6 unique local addresses.
    case uniqueLocal
    /// Unspecified, multicast, broadcast, documentation or otherwise reserved: never callable.
    case reserved
}

/// An IPv4 or IPv6 address, parsed from its text and classified.
public struct NetworkAddress: Sendable, Equatable, CustomStringConvertible {
    /// The address's bytes: 4 for IPv4, 16 for IPv6.
    public let bytes: [UInt8]
    /// The address as text (`192.0.2.1`, `2001:db8::1`), ready for a connection target.
    public let description: String

    /// The address written in `text` (an IPv4 dotted quad or an IPv6 address, with no brackets and no zone), or nil.
    public init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
        description = text
    }

    init(bytes: [UInt8], description: String) {
        self.bytes = bytes
        self.description = description
    }

    /// The scope of the address. An IPv6 address that embeds an IPv4 one (mapped, NAT64, 6to4) takes the IPv4 one's.
    public var scope: AddressScope {
        if bytes.count == 4 { return Self.scope(v4: bytes) }
        let b = bytes
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff { return Self.scope(v4: Array(b[12..<16])) }
        if b[0..<12] == [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] { return Self.scope(v4: Array(b[12..<16])) }
        if b[0] == 0x20 && b[1] == 0x02 { return Self.scope(v4: Array(b[2..<6])) }
        if b[0..<15].allSatisfy({ $0 == 0 }) { return b[15] == 1 ? .loopback : .reserved }
        if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return .linkLocal }
        if b[0] & 0xfe == 0xfc { return .uniqueLocal }
        if b[0] == 0xff { return .reserved }
        if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 { return .reserved }  // deprecated site-local fec0::/10
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8 { return .reserved }  // documentation
        if b[0] & 0xe0 != 0x20 { return .reserved }  // outside 2000::/3, the global unicast block
        return .global
    }

    private static func scope(v4 b: [UInt8]) -> AddressScope {
        switch (b[0], b[1]) {
        case (127, _): return .loopback
        case (10, _), (172, 16...31), (192, 168): return .privateNetwork
        case (169, 254): return .linkLocal
        case (100, 64...127): return .sharedAddressSpace
        case (0, _), (224...255, _): return .reserved
        case (192, 0) where b[2] == 0 || b[2] == 2: return .reserved  // IETF protocol assignments, TEST-NET-1
        case (198, 18...19): return .reserved  // benchmarking
        case (198, 51) where b[2] == 100: return .reserved
        case (203, 0) where b[2] == 113: return .reserved
        default: return .global
        }
    }
}

extension NetworkAddress {
    /// Every address `host` resolves to, from the system resolver (blocking: call it off the cooperative pool).
    public static func resolve(_ host: String) -> [NetworkAddress] {
        if let literal = NetworkAddress(host) { return [literal] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(list) }
        var found: [NetworkAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr, let parsed = Self(socketAddress: address, family: entry.pointee.ai_family),
                !found.contains(parsed)
            {
                found.append(parsed)
            }
            cursor = entry.pointee.ai_next
        }
        return found
    }

    private init?(socketAddress: UnsafeMutablePointer<sockaddr>, family: Int32) {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var raw: [UInt8]
        switch family {
        case AF_INET:
            var value = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            raw = withUnsafeBytes(of: &value) { Array($0) }
            guard inet_ntop(AF_INET, &value, &text, socklen_t(text.count)) != nil else { return nil }
        case AF_INET6:
            var value = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            raw = withUnsafeBytes(of: &value) { Array($0) }
            guard inet_ntop(AF_INET6, &value, &text, socklen_t(text.count)) != nil else { return nil }
        default:
            return nil
        }
        self.init(bytes: raw, description: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
