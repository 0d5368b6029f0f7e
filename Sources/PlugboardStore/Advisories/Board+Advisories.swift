import GRDB
package import PlugboardModel
import PlugboardVersioning

extension Board {
    /// The most advisories one import takes in.
    package static let advisoryImportLimit = 200

    /// Takes in OSV advisories (see ``OSVDocument``), each one audited (`advisory.import`), all in one transaction: all of
    /// them, or none when one is refused. A document already on the board with the same or a later `modified` time is left
    /// as it is; a withdrawal made on this board stays whatever a later import says. Admins only. A document that lets
    /// hosts run more (``advisoryImportLoosening(_:)``) has `loosens` in its audit row's `after`: the operations wait for
    /// approvals before such an import where the board is protected.
    ///
    /// - Parameter documents: Each document's text and the name of the file it came from (for sentences and `source`).
    package func importAdvisories(_ documents: [(text: String, file: String)], by actor: Principal) throws(BoardError) -> ChangeResult {
        guard !documents.isEmpty else { throw BoardError.invalid("give at least one advisory to import") }
        guard documents.count <= Self.advisoryImportLimit else {
            throw BoardError.invalid("more than \(Self.advisoryImportLimit) advisories were given; import them in several commands")
        }
        var parsed: [(document: OSVDocument, file: String)] = []
        var files: [String: String] = [:]
        for (text, file) in documents {
            try Validate.name(file, field: "the file name", limit: 255)
            let document = try OSVDocument.parse(text, file: file)
            if let other = files.updateValue(file, forKey: document.id) {
                throw BoardError.invalid("the advisories \(other) and \(file) both have the id \(document.id); nothing was imported")
            }
            parsed.append((document, file))
        }
        return try change(
            actor, refusal: AuditEntry(action: .advisoryImport, targetType: "advisory", targetID: parsed.first?.document.id),
            requiring: .admin(doing: "import advisories")
        ) { change in
            var taken: [String] = []
            var kept: [String] = []
            for (document, file) in parsed {
                guard let incoming = try AdvisoryQueries.incoming(change.db, document) else {
                    kept.append(document.id)
                    continue
                }
                try AdvisoryQueries.save(change.db, document, source: "file \(file)", at: change.now, by: change.actor)
                try change.record(
                    AuditEntry(
                        action: .advisoryImport, targetType: "advisory", targetID: document.id, before: incoming.stored?.json ?? .null,
                        after: try AdvisoryQueries.imported(change.db, document.id, incoming)))
                taken.append(document.id)
            }
            let notes =
                kept.isEmpty
                ? [] : ["Already on the board with the same or a later modified time, left as they are: \(kept.joined(separator: ", "))."]
            guard !taken.isEmpty else {
                return ChangeResult(changed: false, "Every advisory given is already on the board; nothing changed.", notes: notes)
            }
            return ChangeResult(
                changed: true, "Imported \(taken.count) \(taken.count == 1 ? "advisory" : "advisories"): \(taken.joined(separator: ", ")).",
                notes: notes)
        }
    }

    /// Which of `documents` would let hosts run more if taken in, each as `ID (why)`, and which others would be taken
    /// in: what decides whether an import waits for approvals. A document that is not a valid advisory is in neither
    /// (the import itself refuses it).
    package func advisoryImportLoosening(_ documents: [String]) throws(BoardError) -> (loosening: [String], others: [String]) {
        let parsed = documents.compactMap { try? OSVDocument.parse($0, file: "the document") }
        return try read { db in
            var loosening: [String] = []
            var others: [String] = []
            guard try AdvisoryQueries.hasTables(db) else { return ([], []) }
            for document in parsed {
                guard let incoming = try AdvisoryQueries.incoming(db, document) else { continue }
                if let why = incoming.loosens { loosening.append("\(document.id) (\(why))") } else { others.append(document.id) }
            }
            return (loosening, others)
        }
    }

    /// Withdraws an advisory on this board: hosts no longer act on it, and a later import of it does not bring it back.
    /// Admins; one audited change (`advisory.withdraw`).
    package func withdrawAdvisory(_ id: String, reason: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.reason(reason)
        return try change(
            actor, refusal: AuditEntry(action: .advisoryWithdraw, targetType: "advisory", targetID: id),
            requiring: .admin(doing: "withdraw an advisory")
        ) { change in
            guard let before = try AdvisoryQueries.stored(change.db, id) else { throw Self.unknownAdvisory(id) }
            if before.withdrawnAt != nil {
                return ChangeResult(changed: false, "\(id) is already withdrawn on this board; nothing changed.")
            }
            try AdvisoryQueries.withdraw(change.db, id, reason: reason, at: change.now, by: change.actor)
            try change.record(
                AuditEntry(
                    action: .advisoryWithdraw, targetType: "advisory", targetID: id, reason: reason, before: before.json,
                    after: try AdvisoryQueries.stored(change.db, id)?.json ?? .null))
            return ChangeResult(changed: true, "Withdrew \(id): hosts no longer warn about, refuse or stop what it affects.")
        }
    }

    /// Chooses the action of one advisory in one environment (raised to the environment's floor, if any). Admins; one
    /// audited change (`advisory.set-action`).
    package func setAdvisoryAction(_ id: String, _ action: AdvisoryAction, environment: String, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try Validate.environment(environment)
        return try change(
            actor, refusal: AuditEntry(action: .advisorySetAction, targetType: "advisory", targetID: id, environment: environment),
            requiring: .admin(doing: "choose an advisory's action")
        ) { change in
            guard let advisory = try AdvisoryQueries.stored(change.db, id) else { throw Self.unknownAdvisory(id) }
            try RegistryQueries.requireEnvironment(change.db, environment)
            let before = try AdvisoryQueries.chosenAction(change.db, id, environment: environment)
            if before == action {
                return ChangeResult(changed: false, "\(id) already has the action \(action.rawValue) in \(environment); nothing changed.")
            }
            let floor = try AdvisoryQueries.floors(change.db)[environment]
            let was = AdvisoryQueries.effective(advisory.severity, chosen: before, floor: floor)
            let effective = AdvisoryQueries.effective(advisory.severity, chosen: action, floor: floor)
            try AdvisoryQueries.saveAction(change.db, id, environment: environment, action, at: change.now, by: change.actor)
            // The actions in effect, before and after, tell audit verify whether the change loosened what hosts do.
            try change.record(
                AuditEntry(
                    action: .advisorySetAction, targetType: "advisory", targetID: id, environment: environment,
                    before: .object(["action": .optional(before?.rawValue), "effective": .string(was.rawValue)]),
                    after: .object(["action": .string(action.rawValue), "effective": .string(effective.rawValue)])))
            let raised = effective == action ? "" : " (raised to \(effective.rawValue), the floor of \(environment))"
            return ChangeResult(changed: true, "Set the action of \(id) in \(environment) to \(action.rawValue)\(raised).")
        }
    }

    /// Sets an environment's floor for advisories: every advisory's action there is at least `floor`. Admins; one audited
    /// change (`policy.set`).
    package func setAdvisoryFloor(_ floor: AdvisoryAction, environment: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.environment(environment)
        return try change(
            actor, refusal: AuditEntry(action: .policySet, targetType: "environment", targetID: environment, environment: environment),
            requiring: .admin(doing: "set the advisory policy of \(environment)")
        ) { change in
            let before = try AdvisoryQueries.floors(change.db)[environment]
            if before == floor, try RegistryQueries.environmentExists(change.db, environment) {
                return ChangeResult(changed: false, "\(environment) already has advisory floor \(floor.rawValue); nothing changed.")
            }
            try change.ensureEnvironment(environment)
            try AdvisoryQueries.saveFloor(change.db, environment, floor, at: change.now, by: change.actor)
            try change.record(
                AuditEntry(
                    action: .policySet, targetType: "environment", targetID: environment, environment: environment,
                    before: .object(["advisories": .optional(before?.rawValue)]), after: .object(["advisories": .string(floor.rawValue)])))
            return ChangeResult(
                changed: true,
                "Set the advisory floor of \(environment) to \(floor.rawValue): every advisory's action there is at least that.")
        }
    }

    /// The floor of an environment (nil when none was set).
    package func advisoryFloor(environment: String) throws(BoardError) -> AdvisoryAction? {
        try Validate.environment(environment)
        return try read { db in try AdvisoryQueries.floors(db)[environment] }
    }

    /// Whether choosing `action` for the advisory `id` in `environment` would loosen what hosts there do about it (false
    /// for an advisory the board does not hold: the change itself refuses it).
    package func advisoryActionLoosens(_ id: String, to action: AdvisoryAction, environment: String) throws(BoardError) -> Bool {
        try read { db in
            guard let advisory = try AdvisoryQueries.stored(db, id), advisory.withdrawal == nil else { return false }
            let floor = try AdvisoryQueries.floors(db)[environment]
            let now = AdvisoryQueries.effective(
                advisory.severity, chosen: try AdvisoryQueries.chosenAction(db, id, environment: environment), floor: floor)
            return AdvisoryQueries.effective(advisory.severity, chosen: action, floor: floor) < now
        }
    }

    /// Every advisory, or with `affecting` only those that stand and affect a registered version.
    package func advisories(affecting: Bool) throws(BoardError) -> [AdvisorySummary] {
        try read { db in
            let all = try AdvisoryQueries.all(db)
            let ranges = try AdvisoryQueries.ranges(db)
            let registered = try AdvisoryQueries.registeredVersions(db, Set(ranges.values.flatMap(\.keys)).sorted())
            return all.compactMap { advisory in
                let named = ranges[advisory.id] ?? [:]
                let hits = named.keys.sorted().flatMap { plugin in
                    Self.affected(registered[plugin] ?? [], by: named[plugin] ?? []).map { "\(plugin)@\($0)" }
                }
                if affecting, hits.isEmpty || advisory.withdrawal != nil { return nil }
                return AdvisorySummary(
                    id: advisory.id, aliases: advisory.aliases, summary: advisory.summary, severity: advisory.severity,
                    plugins: named.keys.sorted(), affecting: hits, withdrawn: advisory.withdrawal, modified: advisory.modified,
                    source: advisory.source)
            }
        }
    }

    /// One advisory: its ranges, the registered versions they cover, and its action in every environment.
    package func advisory(_ id: String) throws(BoardError) -> AdvisoryDetail {
        try read { db in
            guard let advisory = try AdvisoryQueries.stored(db, id) else { throw Self.unknownAdvisory(id) }
            let named = try AdvisoryQueries.ranges(db, ids: [id])[id] ?? [:]
            let registered = try AdvisoryQueries.registeredVersions(db, named.keys.sorted())
            let floors = try AdvisoryQueries.floors(db)
            let chosen = try AdvisoryQueries.chosenActions(db)[id] ?? [:]
            let actions =
                advisory.withdrawal != nil
                ? []
                : try RegistryQueries.environments(db).map { environment in
                    AdvisoryEnvironmentAction(
                        environment: environment,
                        action: AdvisoryQueries.effective(advisory.severity, chosen: chosen[environment], floor: floors[environment]),
                        chosen: chosen[environment], floor: floors[environment])
                }
            return AdvisoryDetail(
                id: advisory.id, aliases: advisory.aliases, summary: advisory.summary, severity: advisory.severity,
                published: advisory.published, modified: advisory.modified, withdrawn: advisory.withdrawal,
                withdrawnBy: advisory.withdrawnBy, withdrawReason: advisory.withdrawReason, source: advisory.source,
                importedAt: advisory.importedAt, importedBy: advisory.importedBy,
                plugins: named.keys.sorted().map { plugin in
                    AdvisoryPlugin(
                        pluginID: plugin, ranges: named[plugin] ?? [],
                        affectedVersions: Self.affected(registered[plugin] ?? [], by: named[plugin] ?? []))
                }, actions: actions)
        }
    }

    /// The versions of `versions` that `ranges` cover, in their order.
    private static func affected(_ versions: [String], by ranges: [AdvisoryRange]) -> [String] {
        versions.filter { text in SemanticVersion(parsing: text).map { version in ranges.contains { $0.affects(version) } } ?? false }
    }

    private static func unknownAdvisory(_ id: String) -> BoardError {
        BoardError.notFound("no advisory \(Validate.printable(id)) is on the board; see plugboard advisory list")
    }
}
