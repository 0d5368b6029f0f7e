import GRDB
import PlugboardModel
import Synchronization

/// What a host proves about the whole board before it acts on any row of it, from an anchor it keeps itself (the
/// newest audit row it accepted: sequence, hash, state root):
///
/// 1. the board's structure is the one its migrations made (``SchemaProof``): a dropped proof table or trigger is
///    tampering, never "a board from before the proof";
/// 2. the audit log extends the anchor: the anchor's row is still there with its hash and root, and every row after
///    it chains to the one before and matches its own hash (a forged row, a deleted one, a rewritten log, or an older
///    copy of the board swapped in are refused). Without an anchor (a host's first start, with none configured), the
///    head chains to an intact row before it;
/// 3. the head's state root is the root of the index of row digests, bucket by bucket (so each row proven against
///    the index is proven by the head);
/// 4. the rows that stop plug-ins wherever they are (every kill switch, every revocation of a signing key, every
///    signature policy), the releases of hosts' quarantines (which a host acts on whatever it runs), the rollouts
///    (which bound the release every host runs: a row removed behind the log would widen a rollout to every host) and
///    the approval policies, approver keys and signed approvals of enablements (which decide whether an enablement
///    must carry approvers' signatures), and the advisories with their ranges, actions and floors (which warn about,
///    refuse or stop releases on every host), are exactly the ones the log recorded: none added, changed or removed.
///
/// The rows of each release a host considers are proven on top of this (``Board/stateProblems(pluginID:version:environment:anchor:)``).
struct HeadProof: Sendable {
    /// The head the board was proven at (nil for an empty log).
    let head: AuditCheckpoint?
    /// Whether the board has the state proof (false only for a board from before it, whose log never recorded a root).
    let tracked: Bool
    /// The first problem, naming the row or object; nil when proven.
    let problem: String?

    /// Tables whose every row is proven: what they lack or gain behind the log's back changes what runs everywhere.
    /// Quarantine releases are few (people make them, one per host and release) and a host reads them all with its
    /// registry, before it knows which releases it will consider.
    /// Rollouts are one row per plug-in and environment.
    /// The approval policies, the approvers' keys and the signed approvals kept with enablements decide whether a release
    /// enabled in an environment that requires signed approvals runs: a policy row deleted behind the log would let an
    /// unsigned enablement run on a host that pins no approver keys.
    /// The advisories' tables decide which releases hosts refuse or stop: a range or an action edited behind the log would
    /// let a vulnerable release run.
    static let wholeTables = [
        "kill_switches", "signer_revocations", "signature_policies", "quarantine_releases", "rollouts", "approval_policies",
        "approvers", "enablement_approvals", "advisories", "advisory_ranges", "advisory_actions", "advisory_policies",
    ]

    /// Proves the board as `db` sees it from `anchor` (from the row before the head when nil); `from` is a head this process
    /// already proved to extend `anchor`, whose row is checked again and from which the walk starts.
    static func prove(_ db: Database, anchor: AuditCheckpoint?, from known: AuditCheckpoint?) throws -> HeadProof {
        if let problem = try SchemaProof.problems(db).first { return HeadProof(head: nil, tracked: true, problem: problem) }
        let given = known ?? anchor
        var start = given
        if given == nil, let last = try AuditQueries.lastLink(db), last.seq > 1 {
            // No anchor yet: nothing to extend. The head must still chain to the row before it, intact, and carry the
            // state root; the rows before those decide nothing a host acts on (`audit verify` walks them all, and an
            // anchor or a checkpoint is what catches a log rewritten whole).
            guard let previous = try AuditQueries.record(db, seq: last.seq - 1) else {
                return HeadProof(
                    head: nil, tracked: true, problem: "audit row \(last.seq - 1) is missing before row \(last.seq): rows were deleted")
            }
            guard AuditLog.isIntact(previous) else {
                return HeadProof(
                    head: nil, tracked: true, problem: "audit row \(previous.seq) was edited: its content does not match its hash")
            }
            start = AuditCheckpoint(seq: previous.seq, hash: previous.hash, stateRoot: previous.stateRoot)
        }
        var head = start
        var sawRoot = start?.stateRoot != nil
        if let start = given {
            guard let row = try AuditQueries.record(db, seq: start.seq) else {
                let last = try AuditQueries.head(db)?.seq ?? 0
                return HeadProof(
                    head: nil, tracked: true,
                    problem:
                        "the board's audit log ends at row \(last), before row \(start.seq) that this host already accepted: an older copy of the board is refused"
                )
            }
            if row.hash != start.hash || (start.stateRoot != nil && row.stateRoot != start.stateRoot) {
                return HeadProof(
                    head: nil, tracked: true,
                    problem:
                        "audit row \(start.seq) is not the one this host accepted (its hash or state root differs): the log was rewritten or another board swapped in"
                )
            }
        }
        var problem: String?
        try AuditQueries.forEachChainRow(db, after: start?.seq ?? 0) { row in
            guard problem == nil else { return }
            let expectedSeq = (head?.seq ?? 0) + 1
            if row.seq != expectedSeq {
                problem = "audit row \(expectedSeq) is missing before row \(row.seq): rows were deleted"
            } else if row.prevHash != (head?.hash ?? AuditLog.genesisHash) {
                problem =
                    "audit row \(row.seq) does not chain to the row before it (prev_hash differs): a row was forged, deleted or reordered"
            } else if !row.contentMatchesHash {
                problem = "audit row \(row.seq) was edited: its content does not match its hash"
            } else if sawRoot, row.stateRoot == nil {
                problem = "audit row \(row.seq) has no state root although the rows before it have one"
            }
            sawRoot = sawRoot || row.stateRoot != nil
            head = AuditCheckpoint(seq: row.seq, hash: row.hash, stateRoot: row.stateRoot)
        }
        if let problem { return HeadProof(head: nil, tracked: true, problem: problem) }
        let tracked = try sawRoot || SchemaProof.appliedVersions(db).contains(StateQueries.proofMigration)
        guard tracked else { return HeadProof(head: head, tracked: false, problem: nil) }
        guard let root = head?.stateRoot else {
            return HeadProof(
                head: nil, tracked: true, problem: "the board has the state proof but its last audit row records no state root")
        }
        guard let buckets = try StateLedger.indexBucketHashes(db) else {
            return HeadProof(head: nil, tracked: true, problem: "the index of the audit log's digests was edited (a bucket out of range)")
        }
        if try StateDigest.root(buckets) != root || StateQueries.bucketHashes(db) != buckets {
            return HeadProof(
                head: nil, tracked: true,
                problem: "the index of the audit log's digests does not match the state root of audit row \(head?.seq ?? 0): it was edited")
        }
        for table in wholeTables where try db.tableExists(table) {
            if let problem = try StateLedger.rangeProblems(db, table: table, prefix: []).first {
                return HeadProof(head: nil, tracked: true, problem: problem)
            }
        }
        return HeadProof(head: head, tracked: true, problem: nil)
    }
}

/// The head proofs a ``Board`` made: the last one by state of the file and anchor, and the newest head proven, from
/// which the next walk of the log starts.
final class HeadProofs: Sendable {
    private struct Last {
        let key: String
        let anchor: AuditCheckpoint?
        let proof: HeadProof
    }

    /// A stretch of the log this process walked: every row from `from` (the first row when nil) to `to` chains.
    private struct Walked {
        let from: AuditCheckpoint?
        let to: AuditCheckpoint
    }

    private let last = Mutex<Last?>(nil)
    private let walked = Mutex<Walked?>(nil)

    /// The proof of the board in the file state `key` from `anchor`.
    func proof(_ db: Database, key: String, anchor: AuditCheckpoint?) throws -> HeadProof {
        // Proven already in this state of the file: from the same anchor, or up to this anchor (a host proves the
        // board from its anchor, then each release from the head that proof gave).
        if let known = last.withLock({ $0 }), known.key == key,
            known.anchor == anchor || (known.proof.problem == nil && known.proof.head != nil && known.proof.head == anchor)
        {
            return known.proof
        }
        // A walk already made from this anchor (or through it) need not be made again: it continues from its end.
        let stretch = walked.withLock { $0 }
        let from = stretch.flatMap { $0.from == anchor || $0.to == anchor ? $0.to : nil }
        var proof = try HeadProof.prove(db, anchor: anchor, from: from)
        if proof.problem != nil, from != nil {
            // The stretch's end may itself be what changed: walk again from the anchor itself.
            proof = try HeadProof.prove(db, anchor: anchor, from: nil)
        }
        if proof.problem == nil, let head = proof.head {
            walked.withLock { $0 = Walked(from: anchor, to: head) }
        }
        last.withLock { $0 = Last(key: key, anchor: anchor, proof: proof) }
        return proof
    }
}
