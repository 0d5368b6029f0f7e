/// The state of a board as its readers see it; see `Board.version()`. Compare two for equality only.
public struct BoardVersion: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `PRAGMA data_version` of the board's connection: moves when another connection commits.
    public let dataVersion: Int64
    /// Changes committed through the `Board` object itself.
    public let ownChanges: Int64

    public var description: String { "\(dataVersion).\(ownChanges)" }

    /// A version from its two counters (a host reading a served board counts the server's revisions and its own
    /// reconnections this way).
    public init(dataVersion: Int64, ownChanges: Int64) {
        self.dataVersion = dataVersion
        self.ownChanges = ownChanges
    }
}
