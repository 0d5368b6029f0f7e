import GRDB
import PlugboardModel

/// Who may approve a change request, and who is behind an approval: the rules of the two-person check, read at
/// approval and again at apply.
///
/// - Who may approve (and reject) a request is its environment's `approvers`: `default` (board admins, and for a
///   plug-in's change its owners and maintainers), `admins`, `owners` (board admins and the plug-in's owners), or a
///   principal group, whose members approve when they also hold the default right. A board-wide request is approved by
///   those every protected environment allows.
/// - The person behind a principal acting with an access token is the OS user who made the first token of the token's
///   chain as themselves (its `created_by`, the root of the token tree); without a token, the OS user itself. A token
///   one person made for another principal, and every token made with it, is that person's.
package enum ApprovalRights {
    /// The values of `approvers` that are not group names.
    static let builtIn: Set<String> = ["default", "admins", "owners"]

    /// The person behind `principal` acting with access token `token` (nil: on the board's machine, as that OS user):
    /// the maker of the first token of its chain. Nil when the chain cannot be followed to a token made on the board's
    /// machine (a token or a parent that is not on the board).
    static func person(_ db: Database, principal: String, token: String?) throws -> String? {
        try standing(db, principal: principal, token: token).person
    }

    /// Who is behind `principal` acting with access token `token` (``person(_:principal:token:)``), and whether the
    /// token, or the nearest token it was made with, is revoked: `the access token 'p/n' was revoked` (with `, which
    /// 'principal/token' was made with,` for an ancestor); nil when none of them is, or for no token. One walk of the
    /// token's chain answers both.
    static func standing(_ db: Database, principal: String, token: String?) throws -> (person: String?, revocation: String?) {
        guard let token else { return (principal, nil) }
        let chain = try AccessTokenQueries.chain(db, principal: principal, name: token)
        let person = chain.last.flatMap { $0.madeWith == nil ? $0.token.createdBy : nil }
        guard let index = chain.firstIndex(where: { $0.token.revokedAt != nil }) else { return (person, nil) }
        let name = "'\(chain[index].token.principal)/\(chain[index].token.name)'"
        let revocation =
            index == 0
            ? "the access token \(name) was revoked" : "the access token \(name), which '\(principal)/\(token)' was made with, was revoked"
        return (person, revocation)
    }

    /// The plug-in a request's rows all concern, if they concern one: whose owners and maintainers may approve it.
    static func plugin(of rows: [ChangeRow]) -> String? {
        let types: Set<String> = ["plugin", "plugin_version", "rollout", "quarantine_release", "kill_switch"]
        let ids = Set(
            rows.compactMap { row -> String? in
                guard types.contains(row.targetType), let id = row.targetID else { return nil }
                return String(id.prefix { $0 != "@" && $0 != " " })
            })
        return ids.count == 1 ? ids.first : nil
    }

    /// The `approvers` of the environments a request of `environment` must satisfy: its own, or for a board-wide
    /// request (nil) those of every protected environment.
    static func approvers(_ db: Database, environment: String?) throws -> [(environment: String, approvers: String)] {
        let rows =
            if let environment {
                try Row.fetchAll(
                    db.cachedStatement(sql: "SELECT environment, approvers FROM approval_policies WHERE environment = ?"),
                    arguments: [environment])
            } else {
                try Row.fetchAll(
                    db.cachedStatement(sql: "SELECT environment, approvers FROM approval_policies WHERE approvals > 0 ORDER BY environment")
                )
            }
        return rows.map { ($0["environment"], $0["approvers"]) }
    }

    /// Why `principal` may not approve (or reject) request `request` now, as a sentence that starts with the
    /// principal; nil when they may.
    static func refusal(_ db: Database, principal: String, request: ChangeRequest, doing verb: String = "approve") throws -> String? {
        try refusal(db, principal: principal, id: request.id, environment: request.environment, rows: request.rows, doing: verb)
    }

    /// Why `principal` may not approve request `id` of `environment` that changes `rows` (or do `verb` to it), as a
    /// sentence that starts with the principal; nil when they may.
    static func refusal(
        _ db: Database, principal: String, id: Int64, environment: String?, rows: [ChangeRow], doing verb: String = "approve"
    ) throws -> String? {
        let plugin = plugin(of: rows)
        let admin = try RoleQueries.isAdmin(db, principal)
        let role = try plugin.flatMap { try RoleQueries.role(db, pluginID: $0, principal: principal) }
        let holdsRight = admin || role != nil
        let environments = try approvers(db, environment: environment)
        let what = verb == "approve" ? "approve" : "approve or \(verb)"
        for (environment, approvers) in environments {
            let allowed: Bool
            switch approvers {
            case "default": allowed = holdsRight
            case "admins": allowed = admin
            case "owners": allowed = admin || role == .owner
            default: allowed = try holdsRight && member(db, group: approvers, principal: principal)
            }
            if !allowed {
                return "\(principal) may not \(verb) change request \(id): \(who(approvers, plugin: plugin, in: environment, doing: what))"
            }
        }
        if environments.isEmpty, !holdsRight {
            return "\(principal) may not \(verb) change request \(id): \(who("default", plugin: plugin, in: environment, doing: what))"
        }
        return nil
    }

    /// Who may `verb` a request in `environment` under `approvers`, as the rest of a sentence.
    static func who(_ approvers: String, plugin: String?, in environment: String?, doing verb: String = "approve") -> String {
        let place = environment.map { "in \($0) " } ?? ""
        switch approvers {
        case "default":
            let maintainers = plugin.map { ", and the owners and maintainers of \($0)," } ?? ""
            return "\(place)only board admins\(maintainers) \(verb) it (plugboard admin list, plugboard owner list)"
        case "admins": return "\(place)only board admins \(verb) it (plugboard policy approvals)"
        case "owners":
            let owners = plugin.map { " and the owners of \($0)" } ?? ""
            return "\(place)only board admins\(owners) \(verb) it (plugboard policy approvals)"
        default:
            let roles = plugin.map { " who are board admins or own or maintain \($0)" } ?? " who are board admins"
            return "\(place)only members of the group \(approvers)\(roles) \(verb) it (plugboard group list)"
        }
    }

    /// Refuses `actor`'s approval of `request` unless they may approve it and the person behind it is neither the
    /// person behind the request nor behind another principal's approval of it.
    static func requireApprover(_ db: Database, _ actor: Principal, _ request: ChangeRequest) throws {
        if let refusal = try refusal(db, principal: actor.osUser, request: request) { throw BoardError.notAllowed(refusal) }
        let through = actor.accessToken.map { "the access token '\(actor.osUser)/\($0)'" } ?? "\(actor.osUser)"
        guard let person = try person(db, principal: actor.osUser, token: actor.accessToken) else {
            throw BoardError.notAllowed(
                "\(through) was not made by a person on the board's machine, as far as its chain goes, so it approves nothing")
        }
        guard let author = request.authorPerson else {
            throw BoardError.notAllowed(
                "the person behind change request \(request.id) cannot be told from its author's token, so nobody can approve it; cancel it and open it again"
            )
        }
        if person == author {
            guard actor.accessToken != nil else {
                throw BoardError.notAllowed(
                    "\(person) is behind change request \(request.id) (its author's access token goes back to \(person)), so \(person) cannot approve it; another person must"
                )
            }
            throw BoardError.notAllowed(
                "\(through) goes back to \(person), who is behind change request \(request.id) too, so it cannot approve it; another person must, with a token of their own"
            )
        }
        if let other = request.approvals.first(where: { $0.principal != actor.osUser && $0.person == person && $0.void == nil }) {
            let who = actor.accessToken == nil ? person : "\(through) goes back to \(person), who"
            throw BoardError.notAllowed("\(who) already approved change request \(request.id) as \(other.principal); a person counts once")
        }
    }

    /// Whether going from `old` to `new` approvers may let someone approve who could not: narrowing is only from
    /// `default` to anything, and from `owners` to `admins`.
    package static func loosens(from old: String, to new: String) -> Bool {
        old != new && old != "default" && !(old == "owners" && new == "admins")
    }

    /// Who approves under `approvers`, in a few words: `board admins`, `the group release-managers`.
    static func describe(_ approvers: String) -> String {
        switch approvers {
        case "default": return "board admins and the plug-in's owners and maintainers"
        case "admins": return "board admins only"
        case "owners": return "board admins and the plug-in's owners"
        default: return "the group \(approvers) (its members who are board admins or own or maintain the plug-in)"
        }
    }

    static func member(_ db: Database, group: String, principal: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM principal_groups WHERE name = ? AND principal = ?"), arguments: [group, principal])
            ?? false
    }
}
