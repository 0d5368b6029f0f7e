/// The head of the audit chain: keep it somewhere else to detect a truncated or rewritten log later.
public struct AuditCheckpoint: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The sequence number of the last row.
    public let seq: Int64
    /// The hash of the last row.
    public let hash: String
    /// The board-wide state root after the last row, when the row has one.
    public let stateRoot: String?

    /// Parses `SEQ:HASH:ROOT` as printed by `plugboard audit checkpoint`, or `SEQ:HASH` (a checkpoint taken before
    /// the state proof, or of the log alone).
    public init(parsing text: String) throws(BoardError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        func isHash(_ part: Substring) -> Bool { part.count == 64 && part.allSatisfy { $0.isHexDigit && !$0.isUppercase } }
        guard parts.count == 2 || parts.count == 3, let seq = Int64(parts[0]), seq >= 0, isHash(parts[1]),
            parts.count == 2 || isHash(parts[2])
        else {
            throw .invalid(
                "checkpoint '\(Validate.printable(text))' is not valid: expected SEQ:HASH:ROOT (or SEQ:HASH) as printed by plugboard audit checkpoint"
            )
        }
        self.seq = seq
        self.hash = String(parts[1])
        self.stateRoot = parts.count == 3 ? String(parts[2]) : nil
    }

    /// `SEQ:HASH:ROOT`, or `SEQ:HASH` without a state root.
    public var description: String { "\(seq):\(hash)" + (stateRoot.map { ":" + $0 } ?? "") }

    /// A value with each stored property given.
    public init(seq: Int64, hash: String, stateRoot: String? = nil) {
        self.seq = seq
        self.hash = hash
        self.stateRoot = stateRoot
    }
}
