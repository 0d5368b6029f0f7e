import Foundation
import PlugboardTestSupport
import Testing

/// The operations API under abuse, with a real `plugboard serve --admin`: failed logins never lock out a valid token,
/// bodies and uploads are authorized before they are read, and uploads waiting for their registration have quotas
/// (one at a time for a principal who holds no role, who may still register a new plug-in with its artifact).
@Suite("the operations API under abuse (processes)", .timeLimit(.hangGuard), .serialized)
struct OperationsAbuseTests {
    static let alpha = OperationsAPITests.alpha

    /// Sends `count` requests listing plug-ins with `token` from 127.0.0.1 in one curl; returns their statuses.
    static func statuses(_ served: OperationsAPITests.Served, token: String, count: Int) async throws -> [Int] {
        let url = "\(served.url)/api/admin/plugin.list"
        let arguments =
            ["-s", "--max-time", "60", "-w", "%{http_code}\\n", "-H", "Authorization: Bearer \(token)", "-d", #"{"env":"default"}"#]
            + Array(repeating: ["-o", "/dev/null", url], count: count).flatMap { $0 }
        let result = try await served.sandbox.run(arguments, db: false, executable: "/usr/bin/curl")
        return result.stdout.split(separator: "\n").compactMap { Int($0) }
    }

    /// An access token of `principal`, made by the board's admin.
    static func token(_ sandbox: Sandbox, of principal: String) async throws -> String {
        let created = try await sandbox.ok("access-token", "create", "--principal", principal, "--name", "t", "--json")
        return try #require((try created.json() as? [String: Any])?["token"] as? String)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func failedLoginsFromAnAddressDoNotLockOutAValidTokenFromIt() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await OperationsAPITests.serve(sandbox)
        defer { Task { await served.stop() } }
        // 30 unknown tokens from 127.0.0.1: past the limit (20 a minute) the failures get 429.
        let flooded = ContinuousClock.now
        let flood = try await Self.statuses(served, token: "pba_guessed", count: 30)
        #expect(flood.count == 30 && flood.allSatisfy { $0 == 401 || $0 == 429 } && flood.filter { $0 == 429 }.count >= 10, "\(flood)")
        // A valid admin token from the same address kills at once, and reads.
        let killed = try await served.run(["plugin", "kill", Self.alpha, "--reason", "INC-4"])
        #expect(killed.status == 0, "\(killed)")
        #expect(try await served.run(["plugin", "list"]).status == 0)
        #expect(try await sandbox.ok("plugin", "list", "--json").stdout.contains("\"killed\" : true"))
        // The failures are still limited, while the minute of the flood lasts (a machine slow enough to take longer
        // than that over the steps above has let the limit's window pass: then it may answer 401 again).
        let after = try await Self.statuses(served, token: "pba_guessed", count: 1)
        if ContinuousClock.now - flooded < .seconds(60) {
            #expect(after == [429], "\(after)")
        } else {
            #expect(after == [401] || after == [429], "\(after)")
        }
    }

    @Test func largeBodiesFromAPrincipalWithoutARoleAreRefusedBeforeTheyAreRead() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await OperationsAPITests.serve(sandbox)
        defer { Task { await served.stop() } }
        let mallory = try await Self.token(sandbox, of: "mallory")
        let port = try #require(Int(served.url.split(separator: ":").last ?? ""))
        // Six clients announce 60 MiB registrations and send 64 KiB each, while the admin kills a plug-in: a server
        // that read those bodies would wait for the rest of them until its idle timeout.
        let head =
            "POST /api/admin/plugin.register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer \(mallory)\r\nContent-Length: \(60 << 20)\r\n\r\n"
        async let bodies = withThrowingTaskGroup(of: (answer: String, closed: Bool).self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await Sandbox.offPool { RejectedBodyTests.exchange(port: port, head: head, bodyPart: 65536, timeout: 30) }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let killed = try await served.run(["plugin", "kill", Self.alpha, "--reason", "INC-6"])
        #expect(killed.status == 0, "\(killed)")
        for (answer, closed) in try await bodies {
            #expect(answer.hasPrefix("HTTP/1.1 403"), "\(answer.prefix(300))")
            #expect(answer.contains("mallory may not send a request body larger than"), "\(answer.prefix(400))")
            #expect(closed, "the server kept the connection open with the body unread")
        }
        // A new plug-in is anyone's to register, with its artifact as on the board file (mallory holds no role yet)...
        let files = try Sandbox()
        let gamma = try files.write("gamma.json", manifest("com.example.gamma", "1.0.0"))
        let artifact = try files.write("gamma.so", String(repeating: "plug-in code ", count: 1000))
        let withArtifact = try await served.run(["plugin", "register", gamma, "--artifact", artifact], token: mallory)
        #expect(withArtifact.status == 0, "\(withArtifact)")
        // ...and a small registration from the same principal is read as usual.
        let beta = try files.write("beta.json", manifest("com.example.beta", "1.0.0"))
        let registered = try await served.run(["plugin", "register", beta], token: mallory)
        #expect(registered.status == 0, "\(registered)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func uploadsStayWithinTheirQuotasAndAPrincipalWithoutARoleHasOne() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await OperationsAPITests.serve(sandbox, options: ["--admin-upload-quota", "1", "--admin-upload-total", "2"])
        defer { Task { await served.stop() } }
        let mallory = try await Self.token(sandbox, of: "mallory")
        try await sandbox.ok("owner", "add", Self.alpha, "bob", "--role", "owner")
        try await sandbox.ok("owner", "add", Self.alpha, "carol", "--role", "maintainer")
        let bob = try await Self.token(sandbox, of: "bob")
        let carol = try await Self.token(sandbox, of: "carol")
        var made = 0
        func upload(_ token: String, bytes: Int) async throws -> (status: Int, body: String) {
            made += 1
            let file = try sandbox.write("artifact-\(made)", "\(made)\n" + String(repeating: "x", count: bytes))
            let sum = try await sandbox.run([file], db: false, executable: "/usr/bin/sha256sum").stdout.prefix(64)
            let answer = try await Curl.run([
                "-X", "PUT", "-H", "Authorization: Bearer \(token)", "--data-binary", "@\(file)",
                "\(served.url)/api/admin/artifacts/\(sum)",
            ])
            return (answer.status, answer.body)
        }
        // A principal who holds no role uploads the artifact of a new plug-in, one at a time; a read-only token none.
        let first = try await upload(mallory, bytes: 100)
        #expect(first.status == 200, "\(first)")
        let second = try await upload(mallory, bytes: 100)
        #expect(
            second.status == 429 && second.body.contains("at most 1 for a principal who holds no role on the board"), "\(second)")
        let reader = try await sandbox.ok("access-token", "create", "--principal", "mallory", "--name", "r", "--read-only", "--json")
        let readOnly = try #require((try reader.json() as? [String: Any])?["token"] as? String)
        let refused = try await upload(readOnly, bytes: 100)
        #expect(refused.status == 403 && refused.body.contains("is read-only"), "\(refused)")
        // Four uploads per principal.
        for _ in 0..<3 { #expect(try await upload(served.token, bytes: 100).status == 200) }
        #expect(try await upload(served.token, bytes: 700_000).status == 200)
        let fifth = try await upload(served.token, bytes: 100)
        #expect(fifth.status == 429 && fifth.body.contains("has 4 uploads waiting for their registration, at most 4"), "\(fifth)")
        // 1 MiB per principal.
        #expect(try await upload(bob, bytes: 700_000).status == 200)
        let over = try await upload(bob, bytes: 700_000)
        #expect(over.status == 429 && over.body.contains("at most 1 MiB"), "\(over)")
        // 2 MiB from everyone.
        let full = try await upload(carol, bytes: 700_000)
        #expect(full.status == 507 && full.body.contains("as many uploads waiting for their registration as it takes"), "\(full)")
        let staged = try FileManager.default.contentsOfDirectory(atPath: sandbox.board + ".uploads").filter { !$0.hasPrefix(".") }
        #expect(staged.count == 6, "\(staged)")
    }
}
