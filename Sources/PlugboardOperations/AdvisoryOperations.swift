public import ArgumentParser
public import PlugboardModel
package import PlugboardStore

extension AdvisoryAction: ExpressibleByArgument {}

/// Advisories: plug-in versions known to be vulnerable, in OSV's format, and what hosts do about them
/// (`plugboard advisory …`).
public enum AdvisoryOperations {
    /// Every operation of the group, in the order the OpenAPI document lists them.
    package static let all: [any ParsedOperation.Type] = [Import.self, List.self, Show.self, Exposure.self, SetAction.self, Withdraw.self]
    /// The commands made from the declarations alone (`advisory import` reads its files in the CLI).
    package static let commands: [any ParsedOperation.Type] = [List.self, Show.self, Exposure.self, SetAction.self, Withdraw.self]

    /// `advisory import FILE|FOLDER`: the documents' texts (the CLI reads the files).
    public struct Import: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .advisoryImport, .write, abstract: "Import OSV advisories: one JSON file, or a folder of them (admins).",
            discussion: """
                Each file is one OSV document (schema 1.7) for the ecosystem Plugboard: each affected package's name is a \
                plug-in id, with SEMVER ranges (introduced, fixed, last_affected) or lists of versions. All files are \
                taken in one change, or none when one is refused. A document the board holds with the same or a later \
                modified time is left as it is. Taking an advisory in, or a text that stops or refuses more, never waits \
                for approvals; a text that lets hosts run more (withdrawn by its publisher, a lower severity, a version \
                no longer affected) waits for them where any environment is protected, and is imported on its own.
                """, bodyLimit: 32 << 20, widens: .boardWide)
        /// Each document's text, exactly as read.
        @Option(help: "An OSV document's text (repeat for several).") public var document: [String] = []
        /// The name of the file each document came from, in the same order, for sentences and the advisory's source.
        @Option(help: "The name of the file each document came from, in the same order.") public var file: [String] = []
        public init() {}
        /// Imports `documents`: each one's text and the name of its file.
        public init(documents: [(text: String, file: String)]) {
            document = documents.map(\.text)
            file = documents.map(\.file)
        }
        public func validate() throws {
            if document.isEmpty { throw ValidationError("give at least one advisory (--document) to import") }
            if document.count != file.count { throw ValidationError("give one --file for each --document") }
            if document.count > Board.advisoryImportLimit {
                throw ValidationError("more than \(Board.advisoryImportLimit) advisories were given; import them in several commands")
            }
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.importAdvisories(zip(document, file).map { (text: $0, file: $1) }, by: actor))
        }
        /// Only a text that lets hosts run more waits for approvals; with others that never wait, it is refused, so
        /// that a stop is never held back behind a loosening.
        /// On a board where no environment requires approvals nothing waits, and the documents are not read twice.
        package func widening(on board: Board) throws(BoardError) -> WideningScope? {
            guard try board.protection(environment: nil).required > 0 else { return nil }
            let (loosening, others) = try board.advisoryImportLoosening(document)
            guard !loosening.isEmpty else { return nil }
            if !others.isEmpty {
                throw BoardError.invalid(
                    "\(loosening.joined(separator: ", ")) would let hosts run more and so waits for approvals, while \(others.joined(separator: ", ")) never waits; import them in separate commands; nothing was imported"
                )
            }
            return .boardWide
        }
    }

    /// `advisory list [--affecting]`.
    public struct List: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .advisoryList, .read, abstract: "List the board's advisories, or with --affecting those that affect a registered version.")
        @Flag(help: "Only advisories that stand and affect a registered version.") public var affecting = false
        public init() {}
        public init(affecting: Bool) { self.affecting = affecting }
        /// What it answers.
        public typealias Response = [AdvisorySummary]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.advisories(affecting: affecting))
        }
        package func text(for advisories: [AdvisorySummary]) -> String? {
            Table.listing(
                advisories, "ID", "SEVERITY", "AFFECTS", "STATE", "SUMMARY",
                empty: affecting
                    ? "No standing advisory affects a registered version."
                    : "The board has no advisory; import one with plugboard advisory import FILE."
            ) { advisory in
                [
                    advisory.id, advisory.severity.rawValue,
                    advisory.affecting.isEmpty ? "no registered version" : advisory.affecting.joined(separator: ", "),
                    advisory.withdrawn.map { "withdrawn \($0)" } ?? "standing", advisory.summary ?? "-",
                ]
            }
        }
    }

    /// `advisory show ID`.
    public struct Show: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .advisoryShow, .read, abstract: "Show an advisory: its ranges, the registered versions they cover, its action per environment.")
        @Argument(help: "The advisory's id.") public var id: AdvisoryID
        public init() {}
        public init(id: AdvisoryID) { self.id = id }
        /// What it answers.
        public typealias Response = AdvisoryDetail
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.advisory(id.text))
        }
        package static func text(_ detail: AdvisoryDetail) -> String? {
            var lines = ["\(detail.id): \(detail.summary ?? "no summary")"]
            if !detail.aliases.isEmpty { lines.append("Aliases: \(detail.aliases.joined(separator: ", "))") }
            lines.append("Severity: \(detail.severity.rawValue)   Modified: \(detail.modified)   Source: \(detail.source)")
            if let withdrawn = detail.withdrawn {
                let by = detail.withdrawnBy.map { " by \($0)" } ?? " by its publisher"
                lines.append("Withdrawn \(withdrawn)\(by)\(detail.withdrawReason.map { ": \($0)" } ?? ""); hosts do not act on it.")
            }
            lines.append("")
            lines.append(
                Table.listing(detail.plugins, "PLUG-IN", "RANGES", "REGISTERED VERSIONS AFFECTED", empty: "It names no plug-in.") {
                    [
                        $0.pluginID, $0.ranges.map(\.text).joined(separator: "; "),
                        $0.affectedVersions.joined(separator: ", ").ifEmpty("none"),
                    ]
                })
            if !detail.actions.isEmpty {
                lines.append("")
                lines.append(
                    Table.listing(detail.actions, "ENVIRONMENT", "ACTION", "CHOSEN", "FLOOR", empty: "") {
                        [$0.environment, $0.action.rawValue, $0.chosen?.rawValue ?? "-", $0.floor?.rawValue ?? "-"]
                    })
            }
            return lines.joined(separator: "\n")
        }
    }

    /// `advisory exposure [ID] [--env ENV]`.
    public struct Exposure: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .advisoryExposure, .read,
            abstract: "List the hosts that run a release an advisory affects, per environment, and the fix for each plug-in.",
            discussion: """
                From the fleet's load reports: each host that reported running a release a standing advisory affects (the \
                advisory given, or any), by environment (the one given with --env, or every one) and plug-in. The fix is \
                the lowest registered release above the affected ones that no standing advisory affects, neither yanked \
                nor killed, that works with every reporting host's API version, that every dependent's range \
                contains and whose own dependencies the hosts run (else the highest such release below); the command \
                pins it, or rolls it out, and opens a change request where the environment is protected.
                """, environmentOptional: true)
        @Argument(help: "Only this advisory's exposure (default: every standing advisory's).") public var id: AdvisoryID?
        public var env: String?
        public init() {}
        public init(id: AdvisoryID?, env: String?) {
            self.id = id
            self.env = env
        }
        /// What it answers.
        public typealias Response = [AdvisoryExposure]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.advisoryExposure(id: id?.text, environment: env))
        }
        package func text(for exposures: [AdvisoryExposure]) -> String? {
            guard !exposures.isEmpty else {
                let what = id.map { "a release \($0.text) affects" } ?? "a release a standing advisory affects"
                return "No host reported running \(what)\(env.map { " in \($0)" } ?? "")."
            }
            let hosts = exposures.flatMap { exposure in exposure.hosts.map { (exposure, $0) } }
            var lines = [
                Table.listing(hosts, "ENVIRONMENT", "PLUG-IN", "HOST", "VERSION", "ADVISORIES", "ACTION", "REPORTED", empty: "") {
                    exposure, host in
                    [
                        exposure.environment, exposure.pluginID, host.hostID, host.version, host.advisories.joined(separator: ", "),
                        host.action.rawValue, host.reportedAt,
                    ]
                }, "",
            ]
            for exposure in exposures {
                let head = "\(exposure.pluginID) in \(exposure.environment): "
                guard let fix = exposure.fix, let command = exposure.command else {
                    lines.append(head + "no fix: \(exposure.note ?? "no release fits").")
                    continue
                }
                lines.append(head + "fix \(fix)\(exposure.fixIsLower ? " (lower than the release the hosts run)" : "")")
                lines.append("  \(command)")
                if let note = exposure.note { lines.append("  (\(note))") }
            }
            return lines.joined(separator: "\n")
        }
    }

    /// `advisory set-action ID --env ENV --action warn|refuse-new|stop`.
    public struct SetAction: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .advisorySetAction, .write, abstract: "Choose what hosts of the environment given with --env do about an advisory (admins).",
            discussion: """
                warn: hosts load the affected releases and report the advisory. refuse-new: a host that runs an affected \
                release keeps it, a host that has not loaded it refuses it. stop: every host stops the affected releases, \
                as a kill switch of each version does. Without a choice the severity decides (critical: stop, high: \
                refuse-new, else warn); the environment's floor (plugboard policy set --advisories) raises either. \
                Loosening an action waits for approvals where the environment is protected; raising one never waits.
                """, widens: .inEnvironment)
        @Argument(help: "The advisory's id.") public var id: AdvisoryID
        @Option(help: "warn, refuse-new or stop.") public var action: AdvisoryAction
        public var env: String?
        public init() {}
        public init(id: AdvisoryID, action: AdvisoryAction, env: String) {
            self.id = id
            self.action = action
            self.env = env
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.setAdvisoryAction(id.text, action, environment: try environment(), by: actor))
        }
        /// Only a loosening waits for approvals.
        package func widening(on board: Board) throws(BoardError) -> WideningScope? {
            let environment = try environment()
            return try board.advisoryActionLoosens(id.text, to: action, environment: environment) ? .environment(environment) : nil
        }
    }

    /// `advisory withdraw ID --reason TEXT`.
    public struct Withdraw: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .advisoryWithdraw, .write, abstract: "Withdraw an advisory on this board: hosts no longer act on it (admins).",
            discussion:
                "A later import of the same advisory does not bring it back. Withdrawing waits for approvals where any environment is protected.",
            widens: .boardWide)
        @Argument(help: "The advisory's id.") public var id: AdvisoryID
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(name: .long, help: "Why (kept in the board and the audit log).") public var reason: Reason
        public init() {}
        public init(id: AdvisoryID, reason: Reason) {
            self.id = id
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.withdrawAdvisory(id.text, reason: reason.text, by: actor))
        }
    }
}

/// An advisory's id (`PBSA-2026-0001`, `GHSA-xxxx-xxxx-xxxx`).
public struct AdvisoryID: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try OSVDocument.validateID(text)
        self.text = text
    }
    public var description: String { text }
}

extension String {
    fileprivate func ifEmpty(_ other: String) -> String { isEmpty ? other : self }
}
