package import PlugboardModel
package import PlugboardStore

/// Reads of the board as a whole: environments, clients, the audit log and its verification.
package enum BoardRequests {
    /// `env list`.
    package struct Environments: RoutedRequest {
        package init() {}
        package static let route = AdminRoute(
            "env.list", .get, "/environments", .read, summary: "The board's environments.", response: "NameList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[String]> {
            AdminReply(try board.environments())
        }
    }

    /// `clients [--env]`.
    package struct Clients: RoutedRequest {
        package var env: String?
        package init(env: String?) { self.env = env }
        package static let route = AdminRoute(
            "clients", .get, "/clients", .read, summary: "The applications and SDK instances that read the board, with their last contact.",
            parameters: [AdminParameter("env", .query, "Only this environment's.")], response: "ClientList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[ClientInstance]> {
            if let env { try Validate.environment(env) }
            return AdminReply(try board.clientInstances(environment: env), notes: TelemetryNotes.drops(board, hosts: false))
        }
    }

    /// `audit verify [--checkpoint SEQ:HASH:ROOT]`: the answer says whether the log is intact (a CLI exits 1 when not).
    package struct Verify: RoutedRequest {
        package var checkpoint: String?
        package init(checkpoint: String?) { self.checkpoint = checkpoint }
        package static let route = AdminRoute(
            "audit.verify", .get, "/audit/verify", .read,
            summary: "Recompute the audit chain and compare every row of policy with the digests the log recorded.",
            parameters: [AdminParameter("checkpoint", .query, "A checkpoint printed earlier (SEQ:HASH:ROOT).")],
            response: "AuditVerification")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<AuditVerification> {
            let expected = try checkpoint.map { text throws(BoardError) in try AuditCheckpoint(parsing: text) }
            return AdminReply(try board.verifyAudit(checkpoint: expected))
        }
    }

    /// `audit checkpoint`.
    package struct Checkpoint: RoutedRequest {
        package init() {}
        package static let route = AdminRoute(
            "audit.checkpoint", .get, "/audit/checkpoint", .read,
            summary: "The head of the audit chain and the state root (SEQ:HASH:ROOT).", response: "AuditCheckpoint")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<AuditCheckpoint> {
            guard let head = try board.auditCheckpoint() else { throw BoardError(.notFound, "the audit log is empty") }
            return AdminReply(head)
        }
    }

    /// `audit [--since] [--actor] [--target] [--limit]`, a page at a time: rows after `after`, oldest first.
    package struct Audit: RoutedRequest {
        package var since: String?
        package var actor: String?
        package var target: String?
        package var limit: Int?
        /// Only rows after this sequence number (the previous page's `next_after`).
        package var after: Int64?
        package init(since: String?, actor: String?, target: String?, limit: Int?, after: Int64?) {
            self.since = since
            self.actor = actor
            self.target = target
            self.limit = limit
            self.after = after
        }
        /// The most rows one answer holds.
        package static let pageSize = 5_000

        package static let route = AdminRoute(
            "audit", .get, "/audit", .read, summary: "Rows of the audit log, oldest first, a page at a time.",
            parameters: [
                AdminParameter("since", .query, "Only rows at or after this ISO-8601 time."),
                AdminParameter("actor", .query, "Only rows whose actor or declared principal is this name."),
                AdminParameter("target", .query, "Only rows about this target id (a plug-in id also matches its versions)."),
                AdminParameter("limit", .query, .integer, "At most this many rows (the newest)."),
                AdminParameter("after", .query, .integer, "Only rows after this sequence number (the last page's next_after)."),
            ], response: "AuditPage")

        /// One page.
        package struct Page: Codable, Sendable {
            package var records: [AuditRecord]
            /// The `after` of the next page; absent on the last.
            package var nextAfter: Int64?
        }

        private struct Full: Error {}

        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<Page> {
            if let limit, limit < 1 { throw BoardError(.invalidInput, "--limit must be at least 1") }
            if let since, Timestamp.parse(since) == nil {
                throw BoardError(.invalidInput, "since '\(Validate.escaped(since))' is not an ISO-8601 time")
            }
            var query = AuditQuery(since: since, by: self.actor, target: target, limit: limit)
            query.after = self.after
            var page = Page(records: [], nextAfter: nil)
            let after = self.after ?? 0
            do {
                try board.readAuditLog { log in
                    try log.forEach(query) { record in
                        guard record.seq > after else { return }
                        if page.records.count == Self.pageSize {
                            page.nextAfter = page.records.last?.seq
                            throw Full()
                        }
                        page.records.append(record)
                    }
                }
            } catch {
                guard page.nextAfter != nil else { throw error }
            }
            return AdminReply(page)
        }
    }
}
