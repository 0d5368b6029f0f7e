import Foundation
import PlugboardTestSupport
import Testing

/// A served board whose production needs approvals: `plugboard serve --admin` in a process of its own, the board's
/// maker (the OS user, root) on the board file, and the board admins alice, bob and carol, each through an access token
/// of their own (`--server`, or HTTP from the test). Approvals count per person, the OS user at the root of a token's
/// chain, so each of the three is an OS user of their own (``uids``), who made their first token as themselves; the
/// tests need root (``canSwitchUser``).
struct ProtectedBoard {
    static let pay = "com.example.pay"
    static let search = "com.example.search"
    static let people = ["alice", "bob", "carol"]
    /// The OS user behind each person's tokens (`uid:N` on the board).
    static let uids: [String: UInt32] = ["alice": 4301, "bob": 4302, "carol": 4303]

    let served: OperationsAPITests.Served
    /// Each person's access token.
    let tokens: [String: String]

    var sandbox: Sandbox { served.sandbox }

    /// A board with pay and search registered at 1.0.0 and 1.1.0, the flag checkout.new-flow, production needing
    /// `approvals` approvals, alice, bob and carol admins (and `more` principals, with no rights and a first token the
    /// board's maker made for them), served. Each person works with a token they made with a first token their own OS
    /// user made as themselves: a token the author of a request made, however far up its chain, does not approve it.
    static func start(approvals: Int = 2, more: [String] = [], serveOptions: [String] = []) async throws -> ProtectedBoard {
        let sandbox = try await Sandbox.withBoard(
            [manifest(pay, "1.0.0"), manifest(pay, "1.1.0"), manifest(search, "1.0.0"), manifest(search, "1.1.0")])
        try await sandbox.ok("flag", "create", "checkout.new-flow")
        var first: [String: String] = [:]
        for person in people + more {
            if let uid = uids[person] {
                try await sandbox.ok("admin", "add", person)
                first[person] = try await sandbox.personalToken(for: person, uid: uid)
                continue
            }
            let created = try await sandbox.ok("access-token", "create", "--principal", person, "--name", "first", "--json")
            first[person] = try #require((try created.json() as? [String: Any])?["token"] as? String)
        }
        try await sandbox.ok("policy", "set", "--env", "production", "--approvals", String(approvals))
        let served = try await OperationsAPITests.serve(sandbox, options: serveOptions)
        var tokens: [String: String] = [:]
        for (person, token) in first {
            let created = try await served.run(["access-token", "create", "--name", "laptop", "--json"], token: token)
            tokens[person] = try #require((try created.json() as? [String: Any])?["token"] as? String, "\(created)")
        }
        return ProtectedBoard(served: served, tokens: tokens)
    }

    /// Runs the CLI with `--server` as `person`.
    func run(_ person: String, _ arguments: [String]) async throws -> CLIResult {
        let token: String = try #require(tokens[person], "no token for \(person)")
        return try await served.run(arguments, token: token)
    }

    /// Runs the CLI as `person` and records a test issue unless it exits 0.
    @discardableResult
    func ok(_ person: String, _ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> CLIResult {
        let result = try await run(person, arguments)
        #expect(
            result.status == 0, "\(person): plugboard \(arguments.joined(separator: " ")) failed: \(result)", sourceLocation: sourceLocation
        )
        return result
    }

    /// Change request `id` as `change show --json` gives it on the board file.
    func request(_ id: Int) async throws -> [String: Any] {
        try #require(try await sandbox.ok("change", "show", String(id), "--json").json() as? [String: Any])
    }

    /// The number of the request a `--json` answer of a protected change names.
    static func requestID(_ result: CLIResult) throws -> Int {
        let object = try #require(try result.json() as? [String: Any], "\(result)")
        return try #require(object["id"] as? Int, "\(result)")
    }

    func stop() async { await served.stop() }
}
