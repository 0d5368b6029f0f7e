import Foundation
public import PlugboardModel
public import PlugboardPluginAPI
public import PlugboardSecureStorage
package import PlugboardStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The secure storage of one board: a `SecureStorageEngine` over the board, with the master key checked, for hosts
/// and for the `plugboard` CLI.
///
/// - Hosts hand each plug-in ``storage(forPlugin:)``, a `SecureStorage` bound to that plug-in's namespace. Those
///   reads and writes are the plug-ins' runtime data: each is one short transaction, and none is audited.
/// - Operators change secrets and keys through the admin operations (`setSecret(_:forKey:pluginID:by:)`,
///   ``secret(forKey:pluginID:by:)``, `rotateMasterKey(to:by:)`, `shredDataKeys(pluginID:reason:by:)`,
///   …). Each checks the actor's permissions and the master key, makes the change and appends its audit row in
///   **one** transaction: the engine joins the board's transaction instead of opening its own. Audit rows
///   name plug-ins, key names and key versions, never a value or key material. Reading a secret is audited too.
///
/// A wrong master key is refused when the storage is opened, and again at the start of every transaction, before
/// anything is read or written.
///
/// ```swift
/// let secrets = try await BoardSecureStorage.open(boardAt: path, keyProvider: kms)   // or open(boardAt:): the default key
/// let config = HostConfiguration(source: try BoardFileSource(path: path), identity: identity,
///                                secureStorage: { id in try secrets.storage(forPlugin: id) })
/// ```
public final class BoardSecureStorage: Sendable, CustomStringConvertible {
    /// The board.
    package let board: Board
    /// Where the master key came from.
    public let keySource: MasterKeySource
    /// The engine over the board's ``PlugboardStore/Board/secureStorageBackend``, for the plug-ins' storage; admin
    /// operations open stores that join their transaction, with this store's key and configuration.
    let store: SecureStorageEngine

    // MARK: Opening

    /// Opens the secure storage of `board` with a master key the caller already holds.
    ///
    /// - Parameters:
    ///   - board: The board whose secrets these are (the process's one `Board`).
    ///   - masterKey: The master key.
    ///   - configuration: Data-key rotation and the other settings of the store.
    ///   - source: Where the key came from, named in error messages.
    /// - Throws: `BoardError` with code `masterKey` when the key does not belong to the board ("this master key
    ///   does not belong to this board (…)") or the board's secure storage was never initialised; nothing was read
    ///   or written.
    package init(
        board: Board, masterKey: MasterKey, source: MasterKeySource = .host("the host's master key"),
        configuration: SecureStorageConfiguration = SecureStorageConfiguration()
    ) throws(BoardError) {
        self.board = board
        self.keySource = source
        do {
            store = try SecureStorageEngine(backend: board.secureStorageBackend, masterKey: masterKey, configuration: configuration)
        } catch {
            let stored = try? board.masterKeyCheckValue()
            throw Self.boardError(error, key: masterKey, source: source, boardPath: board.path, storedCheck: stored ?? nil)
        }
    }

    /// Opens the secure storage of the board file at `path` with the default key: `PLUGBOARD_MASTER_KEY` when that
    /// variable is set, else the key file `<board>.key` (see ``/PlugboardSecureStorage/DefaultKeyProvider``).
    ///
    /// - Throws: `BoardError` when the file is not a board (`notABoard`), or with code `masterKey` when the key is
    ///   missing, malformed, readable by others, or not the board's. The message names the file or variable and says
    ///   what to do.
    public static func open(
        boardAt path: String, configuration: SecureStorageConfiguration = SecureStorageConfiguration()
    ) throws(BoardError) -> BoardSecureStorage {
        try open(board: try Board.open(at: path), configuration: configuration)
    }

    /// Opens the secure storage of the board file at `path` with the key that `keyProvider` returns (a host's KMS or
    /// keychain).
    ///
    /// - Throws: `BoardError` when the file is not a board, or with code `masterKey` when the provider fails or its
    ///   key is not the board's.
    public static func open(
        boardAt path: String, keyProvider: any KeyProvider, configuration: SecureStorageConfiguration = SecureStorageConfiguration()
    ) async throws(BoardError) -> BoardSecureStorage {
        try await open(board: try Board.open(at: path), keyProvider: keyProvider, configuration: configuration)
    }

    /// Opens the secure storage of `board` with the default key: `PLUGBOARD_MASTER_KEY` when that variable is set,
    /// else the key file `<board>.key` (see ``/PlugboardSecureStorage/DefaultKeyProvider``).
    ///
    /// - Throws: `BoardError` with code `masterKey` when the key is missing, malformed, readable by others, or
    ///   not the board's. The message names the file or variable and says what to do.
    package static func open(
        board: Board, environment: EnvironmentKeyProvider = EnvironmentKeyProvider(),
        configuration: SecureStorageConfiguration = SecureStorageConfiguration()
    ) throws(BoardError) -> BoardSecureStorage {
        let provider = DefaultKeyProvider(boardPath: board.path, environment: environment)
        let source: MasterKeySource =
            environment.isSet
            ? .environment(variable: environment.variableName) : .keyFile(path: provider.keyFile.path)
        let key: MasterKey
        do {
            key = try provider.loadMasterKey()
        } catch {
            throw try missingKeyError(error, board: board, source: source)
        }
        return try BoardSecureStorage(board: board, masterKey: key, source: source, configuration: configuration)
    }

    /// Opens the secure storage of `board` with the key that `keyProvider` returns (a host's KMS or keychain).
    ///
    /// - Throws: `BoardError` with code `masterKey` when the provider fails or its key is not the board's.
    package static func open(
        board: Board, keyProvider: any KeyProvider,
        configuration: SecureStorageConfiguration = SecureStorageConfiguration()
    ) async throws(BoardError) -> BoardSecureStorage {
        let key: MasterKey
        do {
            key = try await keyProvider.masterKey()
        } catch let error as KeyProviderError {
            throw BoardError(.masterKey, error.message)
        } catch {
            throw BoardError(.masterKey, "the master key provider \(keyProvider) failed: \(error)")
        }
        return try BoardSecureStorage(
            board: board, masterKey: key, source: .host("the key provider \(keyProvider)"), configuration: configuration)
    }

    /// Initialises the secure storage of `board`: the master key is `PLUGBOARD_MASTER_KEY` when that variable is
    /// set, else the key file `<board>.key`, created with mode 0600 if it does not exist; its key check value is
    /// stored in the board with a `keys.init` audit row, in one transaction. Needs an admin.
    ///
    /// Called by `plugboard init` and `plugboard keys init`. On a board whose storage is already initialised it
    /// only opens it (``MasterKeySetup/changed`` is false). If the transaction fails, a key file it created is
    /// removed again.
    package static func initialize(
        board: Board, by actor: Principal, environment: EnvironmentKeyProvider = EnvironmentKeyProvider(),
        configuration: SecureStorageConfiguration = SecureStorageConfiguration()
    ) throws(BoardError) -> (secrets: BoardSecureStorage, setup: MasterKeySetup) {
        if try board.masterKeyCheckValue() != nil {
            let secrets = try open(board: board, environment: environment, configuration: configuration)
            let setup = MasterKeySetup(
                source: secrets.keySource, keyID: secrets.store.masterKeyIdentifier, createdKeyFile: false,
                changed: false)
            return (secrets, setup)
        }
        let keyFile = KeyFileProvider(boardPath: board.path)
        let source: MasterKeySource
        let key: MasterKey
        var created = false
        do {
            if environment.isSet {
                source = .environment(variable: environment.variableName)
                key = try environment.loadMasterKey()
            } else {
                source = .keyFile(path: keyFile.path)
                do {
                    key = try keyFile.loadMasterKey()
                } catch  where error.code == .notFound {
                    key = try KeyFileProvider.create(at: keyFile.path)
                    created = true
                }
            }
        } catch {
            throw BoardError(.masterKey, error.message)
        }
        let changed: Bool
        do {
            let boardID = try board.info("board_id")
            changed = try board.changeSecrets(
                actor, refusal: AuditEntry(action: .keysInit, targetType: "board", targetID: boardID),
                requiring: .admin(doing: "initialise the secure storage of the board")
            ) { backend, change in
                let stored = try backend.read { try $0.keyCheckValue() }
                do throws(SecureStorageError) {
                    _ = try SecureStorageEngine.initialize(backend: backend, masterKey: key, configuration: configuration)
                } catch {
                    throw boardError(error, key: key, source: source, boardPath: board.path, storedCheck: stored)
                }
                guard stored == nil else { return false }
                try change.record(
                    AuditEntry(
                        action: .keysInit, targetType: "board", targetID: boardID,
                        after: .object(["key_id": .string(key.identifier), "source": .string(source.auditName)])))
                return true
            }
        } catch {
            if created { unlink(keyFile.path) }
            throw error
        }
        let secrets = try BoardSecureStorage(board: board, masterKey: key, source: source, configuration: configuration)
        return (secrets, MasterKeySetup(source: source, keyID: key.identifier, createdKeyFile: created, changed: changed))
    }

    /// The non-secret ``/PlugboardSecureStorage/MasterKey/identifier`` of the master key in use.
    public var masterKeyIdentifier: String { store.masterKeyIdentifier }

    /// `BoardSecureStorage(<board>, master key: <id> from <source>)`: never a key.
    public var description: String {
        "BoardSecureStorage(\(board.path), master key: \(store.masterKeyIdentifier) from \(keySource))"
    }

    // MARK: Plug-ins (the SPI)

    /// The secure storage of one registered plug-in, to hand to that plug-in only: it reaches the plug-in's own
    /// namespace and no other. Its reads are not audited; each write records a `secret.write` audit row that names
    /// the keys it wrote (never a value) and commits to the sealed rows' digests, so that an old sealed value copied
    /// back is refused.
    ///
    /// - Throws: `BoardError` with code `invalidInput` for an invalid id, `notFound` if the plug-in is not
    ///   registered (secure storage keeps values only for registered plug-ins).
    public func storage(forPlugin pluginID: String) throws(BoardError) -> any SecureStorage {
        try board.requirePlugin(pluginID)
        do {
            return try store.storage(forPlugin: pluginID)
        } catch {
            throw Self.boardError(error)
        }
    }

    // MARK: Transactions

    /// Runs `body` as one audited change of the board's secret tables (``PlugboardStore/Board/changeSecrets(_:refusal:requiring:_:)``:
    /// `access` is checked, and not-allowed and not-found refusals are audited) with an engine that joins the
    /// transaction. That store checks the master key first, so a wrong key is refused before anything else is read
    /// or written. Secure-storage errors become ``PlugboardStore/BoardError``s.
    func change<T>(
        _ actor: Principal, refusal: AuditEntry, requiring access: RequiredRole,
        _ body: (AuditedChange, SecureStorageEngine, any SecureStorageBackend) throws -> T
    ) throws(BoardError) -> T {
        let key = store.masterKey
        return try board.changeSecrets(actor, refusal: refusal, requiring: access) { backend, change in
            do {
                let joined = try SecureStorageEngine(backend: backend, masterKey: key, configuration: store.configuration)
                return try body(change, joined, backend)
            } catch let error as SecureStorageError {
                let stored = try? backend.read { try $0.keyCheckValue() }
                throw Self.boardError(error, key: key, source: keySource, boardPath: board.path, storedCheck: stored ?? nil)
            }
        }
    }

    /// Runs `body` as a change of one plug-in's secrets or data keys (``change(_:refusal:requiring:_:)``): the
    /// plug-in must be registered and the actor one of its owners or maintainers, or an admin.
    func changePlugin<T>(
        _ pluginID: String, action: AuditAction, doing what: String, reason: String? = nil, by actor: Principal,
        _ body: (AuditedChange, SecureStorageEngine, any SecureStorageBackend) throws -> T
    ) throws(BoardError) -> T {
        let refusal = AuditEntry(action: action, targetType: "plugin", targetID: pluginID, reason: reason)
        return try change(actor, refusal: refusal, requiring: .pluginMaintainers(pluginID, doing: what), body)
    }

    /// Checkpoints the WAL after a change that erased key material, and adds a note if a reader kept the
    /// checkpoint from completing, or if the board is replicated (its replicas keep their history).
    func withCheckpointNote(_ result: ChangeResult, about what: String) -> ChangeResult {
        let note: String
        switch (try? board.checkpointWAL()) ?? .readerBusy {
        case .done, .readOnly:
            return result
        case .readerBusy:
            note =
                "Another process was reading the board, so the WAL still holds \(what) until the next checkpoint (any later write, or sqlite3 \(board.path) 'PRAGMA wal_checkpoint(TRUNCATE)')."
        case .replicated:
            note =
                "The board is replicated by Litestream: its replicas still hold \(what) in their history (LTX files) until their retention drops them, and Litestream checkpoints the WAL itself; restoring a replica from before this change brings them back."
        }
        return ChangeResult(changed: result.changed, result.message, notes: result.notes + [note])
    }
}

extension Board {
    /// The non-secret id of the board's master key (from its key check value), or `nil` if the board's secure
    /// storage was never initialised. Needs no key.
    public func masterKeyIdentifier() throws(BoardError) -> String? {
        try masterKeyCheckValue().flatMap(MasterKey.identifier(ofKeyCheckValue:))
    }
}
