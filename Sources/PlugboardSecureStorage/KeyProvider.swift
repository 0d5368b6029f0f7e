import Foundation

/// A source of the board's master key.
///
/// The engine asks its provider once, when the board is opened, and keeps the ``MasterKey`` in memory for the
/// engine's lifetime; a provider does not need to cache. Plugboard ships ``KeyFileProvider`` (the default, a file
/// of mode 0600 beside the board), ``EnvironmentKeyProvider`` (`PLUGBOARD_MASTER_KEY`, for development and CI),
/// ``DefaultKeyProvider`` (the environment when set, else the key file) and ``StaticKeyProvider`` (a key the host
/// already holds). A host can bring its own, backed by a KMS or a keychain: see <doc:ImplementingAKeyProvider>.
///
/// The requirement is `async` because a host's provider may wait on a network or an IPC call; the file and
/// environment providers also offer a synchronous `loadMasterKey()`.
///
/// A provider must:
/// - return the same key every time until the key is rotated;
/// - throw, never return a made-up or default key, when it cannot produce the real one;
/// - never put key material in an error, a log line or a `description`.
public protocol KeyProvider: Sendable {
    /// Returns the master key.
    ///
    /// - Throws: ``KeyProviderError`` (or the host's own error) when the key cannot be obtained. The error must not
    ///   contain key material.
    func masterKey() async throws -> MasterKey
}

/// A provider that returns a key the host already holds: for tests, and for hosts that obtain the key their own
/// way before opening the board.
public struct StaticKeyProvider: KeyProvider, CustomStringConvertible, CustomReflectable {
    private let key: MasterKey

    /// Creates a provider that always returns `key`.
    public init(_ key: MasterKey) {
        self.key = key
    }

    /// Returns the key given at creation.
    public func masterKey() async throws -> MasterKey { key }

    /// `StaticKeyProvider(id: …)`: never the key.
    public var description: String { "StaticKeyProvider(id: \(key.identifier))" }
    /// A mirror without children, so that `dump` shows no key material.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// A provider that reads the master key from an environment variable, `PLUGBOARD_MASTER_KEY` by default, holding
/// the base64 encoding of 32 bytes (`openssl rand -base64 32`).
///
/// Meant for development and CI, where a key file is awkward. The environment of a process is visible to
/// anything that can inspect it and is inherited by child processes, so prefer the key file or the host's own
/// provider in production.
///
/// A variable that is set but empty is an error, not "unset": an empty secret in CI is a misconfiguration that
/// should not silently fall back to another key. Errors name the variable and never echo its value.
public struct EnvironmentKeyProvider: KeyProvider, CustomStringConvertible {
    /// The default variable: `PLUGBOARD_MASTER_KEY`.
    public static let defaultVariableName = "PLUGBOARD_MASTER_KEY"

    /// The variable read.
    public let variableName: String
    private let lookup: @Sendable (String) -> String?

    /// Creates a provider that reads `variableName` from the process environment when the key is asked for.
    public init(variableName: String = EnvironmentKeyProvider.defaultVariableName) {
        self.variableName = variableName
        self.lookup = { name in
            getenv(name).map { String(cString: $0) }
        }
    }

    /// Creates a provider that reads `variableName` from `environment` (for tests).
    public init(variableName: String = EnvironmentKeyProvider.defaultVariableName, environment: [String: String]) {
        self.variableName = variableName
        self.lookup = { environment[$0] }
    }

    /// Whether the variable is set (even to an empty value).
    public var isSet: Bool { lookup(variableName) != nil }

    /// Reads and parses the variable.
    ///
    /// - Throws: ``KeyProviderError`` with code `KeyProviderError.Code.notFound` when the variable is unset,
    ///   `KeyProviderError.Code.malformed` when it is empty, not base64, or not 32 bytes.
    public func loadMasterKey() throws(KeyProviderError) -> MasterKey {
        guard let value = lookup(variableName) else {
            throw KeyProviderError(
                .notFound,
                "the environment variable \(variableName) is not set; set it to the base64 encoding of 32 random bytes (openssl rand -base64 32)"
            )
        }
        var bytes = Array(value.utf8)
        defer { wipe(&bytes) }
        return try MasterKey(base64EncodedUTF8: bytes, source: "The environment variable \(variableName)")
    }

    /// Reads and parses the variable.
    public func masterKey() async throws -> MasterKey {
        try loadMasterKey()
    }

    /// `EnvironmentKeyProvider(PLUGBOARD_MASTER_KEY)`: the variable's name, never its value.
    public var description: String { "EnvironmentKeyProvider(\(variableName))" }
}

/// The provider the `plugboard` CLI and the default host use: `PLUGBOARD_MASTER_KEY` when that variable is set,
/// else the key file beside the board, `<board path>.key`.
public struct DefaultKeyProvider: KeyProvider, CustomStringConvertible {
    /// The environment provider consulted first.
    public let environment: EnvironmentKeyProvider
    /// The key file used when the environment variable is not set.
    public let keyFile: KeyFileProvider

    /// Creates the default provider for the board at `boardPath`.
    public init(
        boardPath: String,
        environment: EnvironmentKeyProvider = EnvironmentKeyProvider()
    ) {
        self.environment = environment
        self.keyFile = KeyFileProvider(boardPath: boardPath)
    }

    /// Returns the key from the environment variable if it is set (even if malformed: then it throws), else from
    /// the key file.
    public func loadMasterKey() throws(KeyProviderError) -> MasterKey {
        if environment.isSet {
            return try environment.loadMasterKey()
        }
        return try keyFile.loadMasterKey()
    }

    /// Same as ``loadMasterKey()``.
    public func masterKey() async throws -> MasterKey {
        try loadMasterKey()
    }

    /// Names the variable and the file, never a key.
    public var description: String {
        "DefaultKeyProvider(\(environment.variableName) else \(keyFile.path))"
    }
}
