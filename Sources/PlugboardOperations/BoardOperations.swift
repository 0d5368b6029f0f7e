public import ArgumentParser
public import PlugboardModel
package import PlugboardStore

/// Reads of the board as a whole: environments, clients, the audit log and its verification.
public enum BoardOperations {
    /// The operations of `plugboard env`.
    package static let environments: [any ParsedOperation.Type] = [Environments.self]
    /// `plugboard clients`, a command of its own at the top level.
    package static let clients: [any ParsedOperation.Type] = [Clients.self]
    /// The operations of `plugboard audit`: its rows (read a page at a time; the CLI command streams them), verify and
    /// checkpoint.
    package static let audit: [any ParsedOperation.Type] = [Audit.self, Verify.self, Checkpoint.self]
    /// Every operation of this group, in the order the OpenAPI document lists them.
    package static let all: [any ParsedOperation.Type] = environments + clients + audit

    /// `env list`.
    public struct Environments: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .envList, .read, abstract: "List the board's environments.", response: "NameList")
        public init() {}
        /// What it answers.
        public typealias Response = [String]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.environments())
        }
        package static func text(_ names: [String]) -> String? { names.joined(separator: "\n") }
    }

    /// `clients [--env]`: every environment's, or only the one `--env` names.
    public struct Clients: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .clients, .read,
            abstract: "List the applications and SDK instances that read the board through plugboard serve, with their last contact.",
            discussion: """
                Instances silent for more than 30 days are forgotten. With --env, only that environment's. Read from the \
                telemetry file beside the board (<board>.telemetry); a note on stderr says when telemetry was dropped.
                """, response: "ClientList", environmentOptional: true)
        public var env: String?
        public init() {}
        public init(env: String?) { self.env = env }
        /// What it answers.
        public typealias Response = [ClientInstance]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            if let env { try Validate.environment(env) }
            return OperationReply(try board.clientInstances(environment: env), notes: TelemetryNotes.drops(board, hosts: false))
        }
        package static func text(_ instances: [ClientInstance]) -> String? {
            Table.listing(
                instances, "APPLICATION", "INSTANCE", "ENVIRONMENT", "SDK", "TOKEN", "FIRST SEEN", "LAST SEEN",
                empty: "No client has contacted plugboard serve yet."
            ) { instance in
                [
                    instance.appName, instance.instanceID, instance.environment, instance.sdkVersion.cell, instance.tokenName.cell,
                    instance.firstSeen, instance.lastSeen,
                ]
            }
        }
    }

    /// `audit verify [--checkpoint SEQ:HASH:ROOT]`: the answer says whether the log is intact (the CLI exits 1 when
    /// not).
    public struct Verify: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .auditVerify, .read,
            abstract:
                "Recompute the hash chain and compare every row of policy with the digests the log recorded; exit 1 naming what differs.",
            discussion:
                "Names every row added, changed or removed behind the CLI's back. With --checkpoint SEQ:HASH:ROOT (from plugboard audit checkpoint, kept elsewhere) a truncated or rewritten log and state are detected too."
        )
        @Option(
            name: .long, help: ArgumentHelp("A checkpoint printed earlier by plugboard audit checkpoint.", valueName: "seq:hash:root"),
            transform: { try AuditCheckpoint(parsing: $0) })
        public var checkpoint: AuditCheckpoint?
        public init() {}
        public init(checkpoint: AuditCheckpoint?) { self.checkpoint = checkpoint }
        /// What it answers.
        public typealias Response = AuditVerification
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.verifyAudit(checkpoint: checkpoint, widening: OperationsAPI.wideningActions))
        }
        /// The sentence of an intact log (the CLI refuses with the problems of one that is not).
        package func text(for result: AuditVerification) -> String? {
            let state = result.stateRoot.map { "; the board's \(result.stateRowsChecked) rows of policy match it (state root \($0))" } ?? ""
            let head = result.head?.description ?? "-"
            return
                "The audit log is intact: \(result.rowsChecked) rows, head \(head)\(checkpoint.map { ", checkpoint \($0.seq) matches" } ?? "")\(state)."
        }
    }

    /// `audit checkpoint`.
    public struct Checkpoint: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .auditCheckpoint, .read,
            abstract: "Print the head of the audit chain and the state root (SEQ:HASH:ROOT) to keep somewhere else.")
        public init() {}
        /// What it answers.
        public typealias Response = AuditCheckpoint
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            guard let head = try board.auditCheckpoint() else { throw BoardError(.notFound, "the audit log is empty") }
            return OperationReply(head)
        }
        package static func text(_ head: AuditCheckpoint) -> String? { head.description }
    }

    /// `audit [--since] [--actor] [--target] [--limit]`, a page at a time: rows after `after`, oldest first. The CLI
    /// command streams the rows of a board file and reads a served board's page by page.
    public struct Audit: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .audit, .read, abstract: "Rows of the audit log, oldest first, a page at a time.", response: "AuditPage")
        @Option(help: "Only rows at or after this ISO-8601 time.") public var since: String?
        @Option(help: "Only rows whose actor or declared principal is this name.") public var actor: String?
        @Option(help: "Only rows about this target id (a plug-in id also matches its versions).") public var target: String?
        @Option(help: "Only rows of this action (plugin.kill).") public var action: String?
        @Option(help: "At most this many rows (the newest).") public var limit: Int?
        @Option(help: "Only rows after this sequence number (the last page's next_after).") public var after: Int64?
        public init() {}
        public init(since: String?, actor: String?, target: String?, action: String? = nil, limit: Int?, after: Int64?) {
            self.since = since
            self.actor = actor
            self.target = target
            self.action = action
            self.limit = limit
            self.after = after
        }
        /// The most rows one answer holds.
        package static let pageSize = 5_000

        /// One page.
        public struct Page: Codable, Sendable {
            public var records: [AuditRecord]
            /// The `after` of the next page; absent on the last.
            public var nextAfter: Int64?
        }

        private struct Full: Error {}

        public func validate() throws {
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
            for (name, value) in [("actor", actor), ("target", target), ("action", action)] {
                if let value, value.utf8.count > 300 { throw ValidationError("--\(name) is longer than 300 bytes") }
            }
            if let since, Timestamp.parse(since) == nil {
                throw ValidationError("since '\(Validate.escaped(since))' is not an ISO-8601 time")
            }
        }

        /// What it answers.
        public typealias Response = Page
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            var query = AuditQuery(since: since, by: self.actor, target: target, limit: limit)
            query.after = self.after
            query.action = action
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
            return OperationReply(page)
        }
    }
}
