import GRDB
import PlugboardModel

extension AdvisoryQueries {
    /// What taking a document in would do to the advisory of its id the board holds.
    struct Incoming {
        /// The advisory as the board holds it, nil for a new one.
        let stored: StoredAdvisory?
        /// Why taking it in would let hosts run more (a withdrawal by its publisher, a lower severity, a version no
        /// longer affected); nil when it stops or refuses as much or more, and for an advisory that does not stand.
        let loosens: String?
    }

    /// What taking `document` in would do, or nil when the board holds it with the same or a later `modified` time (it
    /// is left as it is).
    static func incoming(_ db: Database, _ document: OSVDocument) throws -> Incoming? {
        let stored = try stored(db, document.id)
        guard let stored else { return Incoming(stored: nil, loosens: nil) }
        if let was = Timestamp.parse(stored.modified), let now = Timestamp.parse(document.modified), was >= now { return nil }
        // An advisory withdrawn, here or by its publisher, denies nothing: a new text of it cannot loosen anything.
        guard stored.withdrawal == nil else { return Incoming(stored: stored, loosens: nil) }
        let ranges = try ranges(db, ids: [document.id])[document.id] ?? [:]
        return Incoming(stored: stored, loosens: AdvisoryFeedQueries.widening(stored, ranges: ranges, to: document))
    }

    /// The `after` of an `advisory.import` row: the advisory as stored now, with `loosens` when the text let hosts run
    /// more (audit verify holds such a row to the approval policies).
    static func imported(_ db: Database, _ id: String, _ incoming: Incoming) throws -> AuditJSON {
        let after = try stored(db, id)?.json ?? .null
        guard let loosens = incoming.loosens, case .object(var members) = after else { return after }
        members["loosens"] = .string(loosens)
        return .object(members)
    }
}
