import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A minimal HTTP/1.1 client for a server on 127.0.0.1, for tests that send many requests: one connection per request
/// (`Connection: close`), read to its end. Spawning curl for each of a thousand requests would cost more than the
/// requests; this speaks to the server as any client does, over a socket, from the test's process.
public struct LoopbackHTTP: Sendable {
    /// An answer: its status, its headers (names in lower case) and its body.
    public struct Answer: Sendable, CustomStringConvertible {
        public let status: Int
        public let headers: [String: String]
        public let body: String

        public var description: String { "HTTP \(status) \(headers.sorted { $0.key < $1.key }) \(body)" }

        /// The body as a JSON object, or nil.
        public var object: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] }
    }

    /// What went wrong below HTTP.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The server's port on 127.0.0.1.
    public let port: UInt16

    /// A client of `url` (`http://127.0.0.1:PORT`).
    public init(url: String) throws {
        guard url.hasPrefix("http://127.0.0.1:"), let port = UInt16(url.dropFirst("http://127.0.0.1:".count)) else {
            throw Failure(description: "\(url) is not http://127.0.0.1:PORT")
        }
        self.port = port
    }

    /// Sends `POST path` with a JSON body and the bearer `token`, plus `headers`; waits (off the shared pool) for the
    /// whole answer.
    public func post(_ path: String, json: [String: Any], token: String, headers: [String: String] = [:]) async throws -> Answer {
        let body = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        var head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Type: application/json\r\n"
        head += "Authorization: Bearer \(token)\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let request = Data((head + "\r\n").utf8) + body
        let port = self.port
        return try await Sandbox.offPool { try Self.exchange(request, port: port) }
    }

    private static func exchange(_ request: Data, port: UInt16) throws -> Answer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)") }
        try request.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var sent = 0
            while sent < bytes.count {
                let count = send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                guard count > 0 else { throw Failure(description: "send: errno \(errno)") }
                sent += count
            }
        }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { break }
            guard count > 0 else { throw Failure(description: "recv: errno \(errno) after \(received.count) bytes") }
            received.append(contentsOf: buffer[0..<count])
        }
        return try parse(received)
    }

    private static func parse(_ data: Data) throws -> Answer {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(description: "no end of headers in \(data.count) bytes")
        }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let status = lines.first.flatMap({ Int($0.split(separator: " ").dropFirst().first ?? "") }) else {
            throw Failure(description: "no status line: \(lines.first ?? "")")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Data(data[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = try dechunked(body) }
        return Answer(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
    }

    private static func dechunked(_ data: Data) throws -> Data {
        var output = Data()
        var rest = data[...]
        while let lineEnd = rest.firstRange(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw Failure(description: "a bad chunk size '\(sizeText)'")
            }
            if size == 0 { break }
            let start = lineEnd.upperBound
            guard rest.distance(from: start, to: rest.endIndex) >= size + 2 else { throw Failure(description: "a short chunk") }
            let stop = rest.index(start, offsetBy: size)
            output.append(rest[start..<stop])
            rest = rest[rest.index(stop, offsetBy: 2)...]
        }
        return output
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
public func freeLoopbackPort() throws -> Int {
    #if canImport(Darwin)
    let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #else
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #endif
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
    guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
