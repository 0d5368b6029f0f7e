import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A request the server refuses before reading its body is answered and its connection closed: the body is never read
/// into memory, and the connection does not wait for the idle timeout (60 s).
@Suite("rejected bodies (processes)", .timeLimit(.hangGuard))
struct RejectedBodyTests {
    /// Sends `head` and `bodyPart` on a new connection to 127.0.0.1:`port`, then reads until the server closes the
    /// connection or `timeout` seconds pass; returns what was read and whether the server closed it.
    static func exchange(port: Int, head: String, bodyPart: Int, timeout: Int) -> (answer: String, closed: Bool) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return ("", false) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return ("", false) }
        var wait = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(head.utf8) + [UInt8](repeating: 0x41, count: bodyPart)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                answer += buffer[0..<count]
                continue
            }
            // 0: the server closed the connection; ECONNRESET: it closed it with the body unread. A timeout: it did not.
            let closed = count == 0 || errno == ECONNRESET
            return (String(decoding: answer, as: UTF8.self), closed)
        }
    }

    @Test func aRequestRefusedBeforeItsBodyIsReadIsAnsweredAndItsConnectionClosed() async throws {
        let sandbox = try await Sandbox.withBoard()
        let server = try ChildProcess(
            Sandbox.binary, ["serve", "--db", sandbox.board, "--listen", "127.0.0.1:0", "--log-level", "warning"])
        let port = try await server.servedPort()
        // A megabyte announced, 64 KiB sent: a server that read the body would wait for the rest until its idle timeout.
        for (path, extra) in [("/api/client/metrics", ""), ("/api/host/report", "Authorization: *:default.pb_wrong\r\n")] {
            let head =
                "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\(extra)Content-Length: 1048576\r\n\r\n"
            let (answer, closed) = try await Sandbox.offPool { Self.exchange(port: port, head: head, bodyPart: 65536, timeout: 30) }
            #expect(answer.hasPrefix("HTTP/1.1 401"), "\(path): \(answer.prefix(200))")
            #expect(answer.lowercased().contains("connection: close"), "\(path): \(answer.prefix(300))")
            #expect(closed, "\(path): the server kept the connection open with the body unread")
        }
        // No route for the method or the path: the body is never read, so the answer says the connection closes (a
        // client that kept it would send its next request after that body, and get a 400 for it).
        for method in ["TRACE", "PATCH", "QUERY", "POST"] {
            let path = method == "POST" ? "/no/such/route" : "/api/client/features"
            let head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n"
            let (answer, closed) = try await Sandbox.offPool { Self.exchange(port: port, head: head, bodyPart: 16, timeout: 30) }
            #expect(answer.hasPrefix("HTTP/1.1 4"), "\(method) \(path): \(answer.prefix(200))")
            #expect(answer.lowercased().contains("connection: close"), "\(method) \(path): \(answer.prefix(300))")
            #expect(closed, "\(method) \(path): the server kept the connection open with the body unread")
        }
        // The server still answers.
        let health = try await Sandbox.offPool {
            Self.exchange(port: port, head: "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", bodyPart: 0, timeout: 30)
        }
        #expect(health.answer.hasPrefix("HTTP/1.1 200"), "\(health.answer.prefix(200))")
    }
}
