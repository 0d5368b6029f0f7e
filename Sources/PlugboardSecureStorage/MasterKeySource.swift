/// Where a board's master key came from: named in messages, never the key itself.
public enum MasterKeySource: Sendable, Hashable, CustomStringConvertible {
    /// A key file, by default `<board>.key`.
    case keyFile(path: String)
    /// An environment variable, by default `PLUGBOARD_MASTER_KEY`.
    case environment(variable: String)
    /// A key the host obtained its own way (a KMS, a keychain, a ``StaticKeyProvider``), described by the host.
    case host(String)

    /// For example `the key file /srv/board.sqlite.key`.
    public var description: String {
        switch self {
        case .keyFile(let path): "the key file \(path)"
        case .environment(let variable): "the environment variable \(variable)"
        case .host(let what): what
        }
    }

    /// `key_file`, `environment` or `host`: the audit log's name for the kind of source.
    package var auditName: String {
        switch self {
        case .keyFile: "key_file"
        case .environment: "environment"
        case .host: "host"
        }
    }
}
