import Foundation
import PlugboardModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A listening socket on `127.0.0.1` at a port the system picks, where the browser comes back after a sign-in
/// (RFC 8252): one small HTTP request at a time, each answered with a short page.
final class LoopbackListener {
    let fd: Int32
    let port: Int

    /// A request the browser sent: its path and query, and the connection to answer on.
    struct Callback {
        let connection: Int32
        let path: String
        let query: [String: String]

        /// Answers with `text` as a page, and closes the connection.
        func reply(status: Int, _ text: String) {
            let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
            let body = "<!doctype html><meta charset=\"utf-8\"><title>Plugboard</title><p>\(escaped)</p>\n"
            let head =
                "HTTP/1.1 \(status) \(status == 200 ? "OK" : status == 404 ? "Not Found" : "Bad Request")\r\nContent-Type: text/html; charset=utf-8\r\n"
                + "Content-Length: \(body.utf8.count)\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
            let bytes = Array((head + body).utf8)
            _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            closeSocket(connection)
        }
    }

    init() throws(BoardError) {
        #if canImport(Darwin)
        let kind = SOCK_STREAM
        #else
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #endif
        let fd = socket(AF_INET, kind, 0)
        guard fd >= 0 else { throw BoardError(.io, "cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, listen(fd, 8) == 0, named == 0 else {
            let reason = String(cString: strerror(errno))
            closeSocket(fd)
            throw BoardError(.io, "cannot listen on 127.0.0.1: \(reason)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { closeSocket(fd) }

    /// The next request, waited for until `deadline`; a connection that sends no request line within 10 seconds is
    /// dropped.
    func next(until deadline: Date) throws(BoardError) -> Callback {
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                throw BoardError(.notAllowed, "the sign-in did not come back within 10 minutes; run plugboard login again")
            }
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, Int32(min(left, 60) * 1000))
            guard ready > 0 else { continue }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { continue }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard let line = Self.requestLine(connection) else {
                closeSocket(connection)
                continue
            }
            // GET /path?query HTTP/1.1
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "GET", let components = URLComponents(string: String(parts[1])) else {
                Callback(connection: connection, path: "", query: [:]).reply(status: 400, "Not a sign-in.")
                continue
            }
            var query: [String: String] = [:]
            for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
            return Callback(connection: connection, path: components.path, query: query)
        }
    }

    /// The request's head read up to its blank line (at most 16 KiB), and its first line.
    private static func requestLine(_ connection: Int32) -> String? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while head.count < 16 << 10 {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            head += buffer[0..<count]
            if head.count >= 4, head.suffix(4) == [13, 10, 13, 10] || String(decoding: head, as: UTF8.self).contains("\r\n\r\n") { break }
        }
        let text = String(decoding: head, as: UTF8.self)
        return text.split(separator: "\r\n", maxSplits: 1).first.map(String.init)
    }
}

/// Closes a descriptor (the listener's own `close()` hides the C function inside it).
private func closeSocket(_ fd: Int32) { close(fd) }
