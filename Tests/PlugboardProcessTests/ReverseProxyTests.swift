import Foundation
import PlugboardTestSupport
import Testing

/// The documented nginx configuration (Examples/nginx/plugboard.conf), with a real nginx between hosts and
/// `plugboard serve`: the event stream passes through unbuffered (a kill switch reaches the host, and a pushed snapshot
/// passes byte for byte), snapshots are cached per revision and token, and the server still checks every token.
@Suite("plugboard serve behind nginx (processes)", .timeLimit(.hangGuard), .serialized)
struct ReverseProxyTests {
    static let nginx = "/usr/sbin/nginx"
    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty && $0 != "false" } ?? false }

    /// The repository's configuration with the upstream, the port and the cache folder of this test.
    static func configuration(upstream: Int, listen: Int, folder: String) throws -> String {
        try Self.nginxConfiguration(
            "Examples/nginx/plugboard.conf", folder: folder,
            replacing: [
                ("server 127.0.0.1:4242;", "server 127.0.0.1:\(upstream);"), ("listen 8080;", "listen 127.0.0.1:\(listen);"),
                ("/var/cache/nginx/plugboard", folder + "/cache"),
            ])
    }

    /// A whole nginx configuration of its own (no daemon, files in `folder`) around the repository's `file`, with the
    /// settings a test substitutes; the file must still contain each of them.
    static func nginxConfiguration(
        _ file: String, folder: String, replacing substitutions: [(String, String)], modules: [String] = [], connections: Int = 256
    ) throws -> String {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var text = try String(contentsOf: repository.appendingPathComponent(file), encoding: .utf8)
        for (from, to) in substitutions {
            #expect(text.contains(from), "\(file) no longer contains \(from)")
            text = text.replacingOccurrences(of: from, with: to)
        }
        return modules.map { "load_module \($0);\n" }.joined() + """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log warn;
            events { worker_connections \(connections); }
            http {
                access_log off;
                client_body_temp_path \(folder)/body;
                proxy_temp_path \(folder)/proxy;
                \(text)
            }
            """
    }

    /// A free loopback port (bound and released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: nginx) || isCI))
    func hostsBehindNginxGetKillSwitchesAndSharedSnapshots() async throws {
        let (sandbox, token, key) = try await RemoteHostTests().makeBoard()
        let (server, _, upstream) = try await RemoteHostTests().serve(sandbox)
        let folder = sandbox.root.appendingPathComponent("nginx").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let port = try Self.freePort()
        let conf = try sandbox.write("nginx/nginx.conf", try Self.configuration(upstream: upstream, listen: port, folder: folder))
        let check = try sandbox.runBlocking(["-t", "-c", conf, "-p", folder], db: false, executable: Self.nginx)
        #expect(check.status == 0, "nginx refused the configuration: \(check)")
        let proxy = try ChildProcess(Self.nginx, ["-c", conf, "-p", folder])
        let url = "http://127.0.0.1:\(port)"
        try await eventually(
            "nginx to come up (\(String(describing: try? String(contentsOfFile: folder + "/error.log", encoding: .utf8))))",
            poll: .milliseconds(50)
        ) { (try? await ServeProcessTests.curl(["\(url)/health"]).0) == 200 }

        // A host through the proxy loads, and a kill switch reaches it through the unbuffered stream.
        let host = try RemoteHostTests().host(url, token, key: key, cache: sandbox.root.appendingPathComponent("cache").path)
        #expect(await host.waitForLine(RemoteHostTests.event("loaded", RemoteHostTests.alpha)) != nil, "\(host.output)")
        let seen = host.output.count
        try await sandbox.ok("plugin", "kill", RemoteHostTests.alpha, "--reason", "through nginx")
        #expect(
            await host.waitForLine(after: seen, RemoteHostTests.event("deactivated", RemoteHostTests.alpha)) != nil,
            "the kill switch did not pass through nginx: \(host.output.suffix(4))")

        // A pushed snapshot passes through nginx as the server wrote it, and the host behind nginx acts on it.
        func stream(_ base: String) throws -> ChildProcess {
            try ChildProcess("/usr/bin/curl", ["-sN", "-H", "Authorization: \(token)", "\(base)/api/host/stream?push=snapshot"])
        }
        let streams = [try stream("http://127.0.0.1:\(upstream)"), try stream(url)]
        for stream in streams { #expect(await stream.waitForLine { $0.hasPrefix("event: connected") } != nil, "\(stream.output)") }
        let before = host.output.count
        try await sandbox.ok("plugin", "kill", RemoteHostTests.beta, "--reason", "pushed through nginx")
        var pushed: [String] = []
        for stream in streams {
            let line = await stream.waitForLine { $0.hasPrefix("data: {\"revision\":") && $0.contains("\"snapshot\":") }
            pushed.append(line.map { stream.output[$0] } ?? "none: \(stream.output)")
            _ = await stream.stop(signal: SIGKILL)
        }
        #expect(pushed[0] == pushed[1], "nginx changed the pushed snapshot")
        #expect(
            await host.waitForLine(after: before, RemoteHostTests.event("deactivated", RemoteHostTests.beta))
                != nil,
            "the pushed kill switch did not reach the host through nginx: \(host.output.suffix(4))")

        // Snapshots: the second request for the same revision and token is served by nginx; another token is not.
        let auth = ["-H", "Authorization: \(token)"]
        let snapshot = "\(url)/api/host/snapshot?plugin=a&rev=42"
        let clock = ContinuousClock()
        let start = clock.now  // before nginx keeps the first answer
        let first = try await ServeProcessTests.curl(auth + ["-D", "-", "-o", "/dev/null", snapshot]).1.lowercased()
        let second = try await ServeProcessTests.curl(auth + ["-D", "-", "-o", "/dev/null", snapshot]).1.lowercased()
        #expect(first.contains("x-cache-status: miss"), "\(first)")
        // Within `proxy_cache_valid` (10 s) nginx answers from its cache; later (a busy machine), it asks the server
        // whether its copy still holds (`proxy_cache_revalidate`), and the server's 304 lets it answer from it again.
        let expired = clock.now - start >= .seconds(10)
        let fromCache = second.contains("x-cache-status: hit") || expired && second.contains("x-cache-status: revalidated")
        #expect(fromCache && second.contains("etag:"), "\(second)")
        #expect(try await ServeProcessTests.curl(["-H", "Authorization: wrong", snapshot]).0 == 401)

        #expect(await host.closeInput() == 0)
        _ = await proxy.stop(signal: SIGKILL)  // nginx without a master process does not stop on SIGTERM
        #expect(await server.stop() == 0)
    }
}
