import GRDB
import PlugboardModel

extension Narrowings {
    /// When and by whom a narrowing was made on the replaced board, from its audit log.
    struct Made: Sendable {
        enum Key: Hashable, Sendable {
            case plugin(String, String)
            case policy(String)
            case admin(String)
            case owner(String, String)
            case flag(String, String)
            case flagDefinition(String, String)
            case rollout(String, String)
            case changeRequest(String)
            case group(String, String)
            case identity(String)
            case groupMapping(String)
            /// An advisory imported (or its document replaced) on the replaced board.
            case advisory(String)
            /// An advisory's action chosen in an environment.
            case advisoryAction(String, String)
            /// A subscribed feed applied.
            case advisoryFeed(String)
        }

        let key: Key
        let at: String
        let by: String

        /// The changes of the replaced board's audit log (`db`) that narrow something, oldest first.
        static func read(_ db: Database) throws -> [Made] {
            let narrowing: [AuditAction] = [
                .pluginDisable, .policySet, .adminRemove, .ownerRemove, .ownerAdd, .flagDisable, .flagRollout, .flagImport, .changeApply,
                .changeReject, .changeCancel, .changeEmergency, .groupRemove, .principalUnlink, .ssoUnmapGroup, .advisoryImport,
                .advisorySetAction, .advisoryFeedApply,
            ]
            return try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT action, target_id, environment, json_extract(before_json, '$.principal'), at, actor FROM audit_log
                        WHERE outcome = 'ok' AND target_id IS NOT NULL AND action IN (SELECT value FROM json_each(?))
                        ORDER BY seq
                        """), arguments: [AuditAction.jsonList(narrowing)]
            ).compactMap { row -> Made? in
                let (stored, target, environment, principal): (String, String, String?, String?) = (row[0], row[1], row[2], row[3])
                guard let action = AuditAction(stored: stored) else { return nil }
                let key: Key
                switch (action, environment, principal) {
                case (.pluginDisable, let environment?, _): key = .plugin(target, environment)
                case (.policySet, _, _): key = .policy(environment ?? target)
                case (.adminRemove, _, _): key = .admin(target)
                case (.ownerRemove, _, let principal?), (.ownerAdd, _, let principal?): key = .owner(target, principal)
                case (.flagDisable, let environment?, _): key = .flag(target, environment)
                case (.flagRollout, let environment?, _), (.flagImport, let environment?, _): key = .flagDefinition(target, environment)
                case (.changeApply, _, _), (.changeReject, _, _), (.changeCancel, _, _), (.changeEmergency, _, _):
                    key = .changeRequest(target)
                case (.groupRemove, _, _):
                    let parts = target.split(separator: "/", maxSplits: 1).map(String.init)
                    guard parts.count == 2 else { return nil }
                    key = .group(parts[0], parts[1])
                case (.principalUnlink, _, _): key = .identity(target)
                case (.ssoUnmapGroup, _, _): key = .groupMapping(target)
                case (.advisoryImport, _, _): key = .advisory(target)
                case (.advisorySetAction, let environment?, _): key = .advisoryAction(target, environment)
                case (.advisoryFeedApply, _, _): key = .advisoryFeed(target)
                default: return nil
                }
                return Made(key: key, at: row[4], by: row[5])
            }
        }
    }
}
