import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// People who sign in with an identity provider: keyed on (issuer, subject), never joined to a principal by a name the
/// provider sends, and given the roles their groups map to, each grant an audit row.
@Suite("identities and groups to roles", .timeLimit(.hangGuard))
struct IdentityStoreTests {
    static let admin = try! Principal(osUser: "alice")
    static let issuer = "https://login.example.com"
    static let other = "https://sso.other.example"
    static let via = "console (oidc https://login.example.com) from 127.0.0.1"

    static func board() throws -> Board {
        let board = try Board.inMemory(by: admin)
        _ = try board.register(StoreOperationTests.manifest("com.example.a", "1.0.0"), by: admin)
        return board
    }

    @Test func aFirstSignInMakesAPrincipalOfItsOwnAndNeverTakesAnExistingName() throws {
        let board = try Self.board()
        // The provider says the person is "alice", an admin's name: a new principal, never alice.
        let first = try board.signIn(issuer: Self.issuer, subject: "00u-1", name: "alice", groups: [], via: Self.via)
        #expect(first.principal == "alice-2" && first.created && !first.readOnly)
        #expect(try RoleQueriesProbe.isAdmin(board, "alice-2") == false)
        // The same account signs in as the same principal; the same subject at another provider is someone else.
        #expect(try board.signIn(issuer: Self.issuer, subject: "00u-1", name: "renamed", groups: [], via: Self.via).principal == "alice-2")
        #expect(try !board.signIn(issuer: Self.issuer, subject: "00u-1", name: "alice", groups: [], via: Self.via).created)
        let elsewhere = try board.signIn(issuer: Self.other, subject: "00u-1", name: "alice", groups: [], via: Self.via)
        #expect(elsewhere.principal == "alice-3")
        // A name with characters a principal may not have, or none left, still makes a valid principal.
        let odd = try board.signIn(issuer: Self.issuer, subject: "00u-2", name: "Zoë Smith/plugboard", groups: [], via: Self.via)
        #expect(odd.principal == "ZoSmithplugboard")
        #expect(
            try board.signIn(issuer: Self.issuer, subject: "00u-3", name: "plugboard/x", groups: [], via: Self.via).principal
                == "plugboardx")
        let actions = try board.auditRecords(AuditQuery()).filter { $0.action == AuditAction.ssoSignIn.name }
        #expect(actions.count == 4)
        #expect(actions.first?.by == "alice-2" && actions.first?.via == Self.via)
    }

    @Test func anAdminLinksAnAccountToAPrincipalAndUnlinksIt() throws {
        let board = try Self.board()
        #expect(throws: BoardError.self) {
            try board.linkIdentity(issuer: Self.issuer, subject: "00u-9", to: "bob", by: try Principal(osUser: "mallory"))
        }
        #expect(try board.linkIdentity(issuer: Self.issuer, subject: "00u-9", to: "alice", by: Self.admin).changed)
        #expect(try !board.linkIdentity(issuer: Self.issuer, subject: "00u-9", to: "alice", by: Self.admin).changed)
        #expect(throws: BoardError.self) { try board.linkIdentity(issuer: Self.issuer, subject: "00u-9", to: "bob", by: Self.admin) }
        #expect(try board.signIn(issuer: Self.issuer, subject: "00u-9", name: "someone", groups: [], via: Self.via).principal == "alice")
        #expect(try board.unlinkIdentity(issuer: Self.issuer, subject: "00u-9", by: Self.admin).changed)
        #expect(try board.signIn(issuer: Self.issuer, subject: "00u-9", name: "someone", groups: [], via: Self.via).principal == "someone")
        for bad in ["login.example.com", "https://a b", String(repeating: "h", count: 600)] {
            #expect(throws: BoardError.self) { try board.linkIdentity(issuer: bad, subject: "x", to: "alice", by: Self.admin) }
        }
        #expect(throws: BoardError.self) { try board.linkIdentity(issuer: Self.issuer, subject: "has space", to: "alice", by: Self.admin) }
    }

    @Test func groupsGiveRolesAtSignInAndTakeBackOnlyWhatTheyGave() throws {
        let board = try Self.board()
        #expect(throws: BoardError.self) {
            try board.setGroupMapping(issuer: Self.issuer, group: "dev", role: .owner, pluginID: nil, mapped: true, by: Self.admin)
        }
        #expect(throws: BoardError.self) {
            try board.setGroupMapping(
                issuer: Self.issuer, group: "ops", role: .admin, pluginID: "com.example.a", mapped: true, by: Self.admin)
        }
        #expect(
            try board.setGroupMapping(issuer: Self.issuer, group: "ops", role: .admin, pluginID: nil, mapped: true, by: Self.admin).changed)
        #expect(
            try board.setGroupMapping(
                issuer: Self.issuer, group: "dev", role: .maintainer, pluginID: "com.example.a", mapped: true, by: Self.admin
            ).changed)
        #expect(
            try board.setGroupMapping(issuer: Self.issuer, group: "auditors", role: .readOnly, pluginID: nil, mapped: true, by: Self.admin)
                .changed)
        // Another provider's group of the same name gives nothing.
        let stranger = try board.signIn(issuer: Self.other, subject: "s", name: "eve", groups: ["ops"], via: Self.via)
        #expect(try !RoleQueriesProbe.isAdmin(board, stranger.principal))

        let bob = try board.signIn(issuer: Self.issuer, subject: "00u-b", name: "bob", groups: ["ops", "dev"], via: Self.via)
        #expect(try RoleQueriesProbe.isAdmin(board, "bob") && bob.changes.count == 2)
        #expect(try board.owners(of: "com.example.a").contains { $0.principal == "bob" && $0.role == .maintainer })
        let grants = try board.auditRecords(AuditQuery()).filter { $0.action == AuditAction.ssoGrant.name }
        #expect(grants.count == 2 && grants.allSatisfy { $0.by == "bob" && ($0.reason ?? "").contains(Self.issuer) })
        // Signing in again with the same groups changes nothing; without ops, bob is no longer an admin.
        #expect(
            try board.signIn(issuer: Self.issuer, subject: "00u-b", name: "bob", groups: ["ops", "dev"], via: Self.via).changes.isEmpty)
        let later = try board.signIn(issuer: Self.issuer, subject: "00u-b", name: "bob", groups: ["auditors"], via: Self.via)
        #expect(later.readOnly && later.changes.count == 2)
        #expect(try !RoleQueriesProbe.isAdmin(board, "bob"))
        #expect(try !board.owners(of: "com.example.a").contains { $0.principal == "bob" })
        // A role given by hand stays whatever the groups say.
        _ = try board.addAdmin("bob", by: Self.admin)
        _ = try board.signIn(issuer: Self.issuer, subject: "00u-b", name: "bob", groups: [], via: Self.via)
        #expect(try RoleQueriesProbe.isAdmin(board, "bob"))
        #expect(
            try board.setGroupMapping(issuer: Self.issuer, group: "ops", role: .admin, pluginID: nil, mapped: false, by: Self.admin).changed
        )
        #expect(try board.groupRoles().count == 2)
    }
}

/// Reads a role without a change.
enum RoleQueriesProbe {
    static func isAdmin(_ board: Board, _ principal: String) throws -> Bool {
        try board.read { db in try RoleQueries.isAdmin(db, principal) }
    }
}
