import Foundation
import GRDB
import PlugboardPluginAPI
import PlugboardStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
    var auditName: String {
        switch self {
        case .keyFile: "key_file"
        case .environment: "environment"
        case .host: "host"
        }
    }
}

/// What ``BoardSecrets/initialize(board:actor:environment:configuration:)`` did.
public struct MasterKeySetup: Sendable, Hashable {
    /// Where the master key is.
    public let source: MasterKeySource
    /// The key's non-secret ``MasterKey/identifier``.
    public let keyID: String
    /// Whether a new key file was created (else an existing key file or the environment variable was used).
    public let createdKeyFile: Bool
    /// Whether the board's key check value was stored now (else the storage was already initialised).
    public let changed: Bool
}

/// One stored secret as `plugboard secret list` shows it: its name and how it is sealed, never its value.
public struct SecretEntry: Sendable, Hashable, Codable {
    /// The plug-in.
    public let pluginID: String
    /// The key name (not secret).
    public let key: String
    /// The data key version that sealed the value.
    public let dataKeyVersion: Int
    /// That data key's state: `active`, `retired` or `shredded`.
    public let dataKeyState: String
    /// False when the data key was shredded: the value can no longer be decrypted.
    public let readable: Bool
    /// When the value was last set or re-encrypted.
    public let updatedAt: String
}

/// One data key as `plugboard keys list` shows it: never the key, wrapped or not.
public struct DataKeyEntry: Sendable, Hashable, Codable {
    /// The plug-in.
    public let pluginID: String
    /// The version, from 1.
    public let version: Int
    /// `active`, `retired` or `shredded`.
    public let state: String
    /// How many values the key has sealed.
    public let encryptionCount: Int
    /// How many stored values it seals now.
    public let valueCount: Int
    /// When it was created.
    public let createdAt: String
    /// When it stopped being active, if it did.
    public let retiredAt: String?
}

/// The secure storage of one board: the secrets engine over the board, with the master key checked, for hosts
/// and for the `plugboard` CLI.
///
/// - Hosts hand each plug-in ``storage(forPlugin:)``, a `SecureStorage` bound to that plug-in's namespace. Those
///   reads and writes are the plug-ins' runtime data: each is one short transaction, and none is audited.
/// - Operators change secrets and keys through the admin operations (``setSecret(_:forKey:pluginID:actor:)``,
///   ``secret(forKey:pluginID:actor:)``, ``rotateMasterKey(to:actor:)``, ``shredDataKeys(pluginID:reason:actor:)``,
///   …). Each checks the actor's permissions and the master key, makes the change and appends its audit row in
///   **one** transaction: the secrets engine joins the board transaction instead of opening its own. Audit rows
///   name plug-ins, key names and key versions, never a value or key material. Reading a secret is audited too.
///
/// A wrong master key is refused when the storage is opened, and again at the start of every transaction, before
/// anything is read or written.
///
/// ```swift
/// let board = try Board.open(at: path)
/// let secrets = try BoardSecrets.open(board: board)      // PLUGBOARD_MASTER_KEY, else <board>.key
/// let config = HostConfiguration(board: board, identity: identity,
///                                secureStorage: { id in try secrets.storage(forPlugin: id) })
/// ```
public final class BoardSecrets: Sendable, CustomStringConvertible {
    /// The board.
    public let board: Board
    /// Where the master key came from.
    public let keySource: MasterKeySource
    /// The engine over ``BoardSecretVault``, for the plug-ins' storage; admin operations open engines that join
    /// their transaction, with this engine's key and configuration.
    let engine: SecretsEngine

    // MARK: Opening

    /// Opens the secure storage of `board` with a master key the caller already holds.
    ///
    /// - Parameters:
    ///   - source: Where the key came from, named in error messages.
    /// - Throws: ``BoardError`` with code `masterKey` when the key does not belong to the board ("this master key
    ///   does not belong to this board (…)") or the board's secure storage was never initialised; nothing was read
    ///   or written.
    public init(
        board: Board, masterKey: MasterKey, source: MasterKeySource = .host("the host's master key"),
        configuration: SecretsEngine.Configuration = SecretsEngine.Configuration()
    ) throws(BoardError) {
        self.board = board
        self.keySource = source
        do {
            engine = try SecretsEngine(vault: BoardSecretVault(board: board), masterKey: masterKey, configuration: configuration)
        } catch {
            let stored = try? board.read { db in try BoardVaultTransaction(db: db).keyCheckValue() }
            throw Self.boardError(error, key: masterKey, source: source, boardPath: board.path, storedCheck: stored ?? nil)
        }
    }

    /// Opens the secure storage of `board` with the default key: `PLUGBOARD_MASTER_KEY` when that variable is set,
    /// else the key file `<board>.key` (see ``DefaultKeyProvider``).
    ///
    /// - Throws: ``BoardError`` with code `masterKey` when the key is missing, malformed, readable by others, or
    ///   not the board's. The message names the file or variable and says what to do.
    public static func open(
        board: Board, environment: EnvironmentKeyProvider = EnvironmentKeyProvider(),
        configuration: SecretsEngine.Configuration = SecretsEngine.Configuration()
    ) throws(BoardError) -> BoardSecrets {
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
        return try BoardSecrets(board: board, masterKey: key, source: source, configuration: configuration)
    }

    /// Opens the secure storage of `board` with the key that `keyProvider` returns (a host's KMS or keychain).
    ///
    /// - Throws: ``BoardError`` with code `masterKey` when the provider fails or its key is not the board's.
    public static func open(
        board: Board, keyProvider: any KeyProvider,
        configuration: SecretsEngine.Configuration = SecretsEngine.Configuration()
    ) async throws(BoardError) -> BoardSecrets {
        let key: MasterKey
        do {
            key = try await keyProvider.masterKey()
        } catch let error as KeyProviderError {
            throw BoardError(.masterKey, sentence(error.message))
        } catch {
            throw BoardError(.masterKey, "the master key provider \(keyProvider) failed: \(error)")
        }
        return try BoardSecrets(
            board: board, masterKey: key, source: .host("the key provider \(keyProvider)"), configuration: configuration)
    }

    /// Initialises the secure storage of `board`: the master key is `PLUGBOARD_MASTER_KEY` when that variable is
    /// set, else the key file `<board>.key`, created with mode 0600 if it does not exist; its key check value is
    /// stored in the board with a `keys.init` audit row, in one transaction. Needs an admin.
    ///
    /// Called by `plugboard init` and `plugboard keys init`. On a board whose storage is already initialised it
    /// only opens it (``MasterKeySetup/changed`` is false). If the transaction fails, a key file it created is
    /// removed again.
    public static func initialize(
        board: Board, actor: Actor, environment: EnvironmentKeyProvider = EnvironmentKeyProvider(),
        configuration: SecretsEngine.Configuration = SecretsEngine.Configuration()
    ) throws(BoardError) -> (secrets: BoardSecrets, setup: MasterKeySetup) {
        if try board.read({ db in try BoardVaultTransaction(db: db).keyCheckValue() }) != nil {
            let secrets = try open(board: board, environment: environment, configuration: configuration)
            let setup = MasterKeySetup(
                source: secrets.keySource, keyID: secrets.engine.masterKeyIdentifier, createdKeyFile: false,
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
            throw BoardError(.masterKey, sentence(error.message))
        }
        let changed: Bool
        do {
            let boardID = try board.info("board_id")
            changed = try board.change(actor, refusal: AuditEntry(action: "keys.init", targetType: "board", targetID: boardID)) { db in
                try requireAdmin(db, actor: actor, doing: "initialise the secure storage of the board")
                let vault = JoinedTransactionVault(db: db)
                let stored = try vault.read { try $0.keyCheckValue() }
                do throws(SecureStorageError) {
                    _ = try SecretsEngine.initialize(vault: vault, masterKey: key, configuration: configuration)
                } catch {
                    throw boardError(error, key: key, source: source, boardPath: board.path, storedCheck: stored)
                }
                guard stored == nil else { return false }
                try AuditLog.append(
                    db, actor: actor,
                    entry: AuditEntry(
                        action: "keys.init", targetType: "board", targetID: boardID,
                        after: .object(["key_id": .string(key.identifier), "source": .string(source.auditName)])))
                return true
            }
        } catch {
            if created { unlink(keyFile.path) }
            throw error
        }
        let secrets = try BoardSecrets(board: board, masterKey: key, source: source, configuration: configuration)
        return (secrets, MasterKeySetup(source: source, keyID: key.identifier, createdKeyFile: created, changed: changed))
    }

    /// The non-secret ``MasterKey/identifier`` of the master key in use.
    public var masterKeyIdentifier: String { engine.masterKeyIdentifier }

    /// `BoardSecrets(<board>, master key: <id> from <source>)`: never a key.
    public var description: String {
        "BoardSecrets(\(board.path), master key: \(engine.masterKeyIdentifier) from \(keySource))"
    }

    // MARK: Plug-ins (the SPI)

    /// The secure storage of one registered plug-in, to hand to that plug-in only: it reaches the plug-in's own
    /// namespace and no other. Its reads and writes are not audited.
    ///
    /// - Throws: ``BoardError`` with code `invalidInput` for an invalid id, `notFound` if the plug-in is not
    ///   registered (secure storage keeps values only for registered plug-ins).
    public func storage(forPlugin pluginID: String) throws(BoardError) -> any SecureStorage {
        try Validate.pluginID(pluginID)
        try board.read { db in try requirePlugin(db, pluginID) }
        do {
            return try engine.storage(forPlugin: pluginID)
        } catch {
            throw Self.boardError(error)
        }
    }

    // MARK: Secrets (audited)

    /// Seals `value` and stores it under `key` for `pluginID`, with a `secret.set` audit row (key name and data key
    /// versions, never the value). Setting the value a key already has changes nothing and writes nothing.
    ///
    /// Needs an owner or maintainer of the plug-in, or an admin.
    public func setSecret(_ value: Data, forKey key: String, pluginID: String, actor: Actor) throws(BoardError)
        -> ChangeResult
    {
        try Validate.pluginID(pluginID)
        let key = try Self.validatedKeyName(key)
        do {
            try SecureStorageLimits.validateValue(value, forKey: key)
        } catch {
            throw Self.boardError(error)
        }
        return try changePlugin(pluginID, action: "secret.set", doing: "set the secrets of", actor: actor) { db, engine in
            let records = BoardVaultTransaction(db: db)
            let before = try records.sealedValue(pluginID: pluginID, key: key)
            if before != nil, let current = try? engine.value(forKey: key, pluginID: pluginID), current == value {
                return ChangeResult(changed: false, "the secret '\(key)' of \(pluginID) already has this value; nothing changed.")
            }
            try engine.setValue(value, forKey: key, pluginID: pluginID)
            let version = try records.sealedValue(pluginID: pluginID, key: key)?.dataKeyVersion
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "secret.set", targetType: "plugin", targetID: pluginID,
                    before: Self.slot(key, before?.dataKeyVersion), after: Self.slot(key, version)))
            return ChangeResult(
                changed: true,
                "\(before == nil ? "Stored" : "Replaced") the secret '\(key)' of \(pluginID) (sealed with data key version \(version ?? 0))."
            )
        }
    }

    /// Opens and returns the secret stored under `key` for `pluginID`, with a `secret.get` audit row naming the key.
    ///
    /// Needs an owner or maintainer of the plug-in, or an admin.
    ///
    /// - Throws: ``BoardError`` with code `notFound` if there is no such secret (audited as a refusal), `integrity`
    ///   if the stored value or its data key was altered or moved, `conflict` if its data key was shredded. Never
    ///   returns wrong data.
    public func secret(forKey key: String, pluginID: String, actor: Actor) throws(BoardError) -> Data {
        try Validate.pluginID(pluginID)
        let key = try Self.validatedKeyName(key)
        return try changePlugin(pluginID, action: "secret.get", doing: "read the secrets of", actor: actor) { db, engine in
            let missing = BoardError(.notFound, "\(pluginID) has no secret named '\(key)'; see plugboard secret list --plugin \(pluginID)")
            guard let record = try BoardVaultTransaction(db: db).sealedValue(pluginID: pluginID, key: key) else { throw missing }
            let opened: Data?
            do {
                opened = try engine.value(forKey: key, pluginID: pluginID)
            } catch let error as SecureStorageError where error.code == .keysShredded {
                throw BoardError(
                    .conflict,
                    "the secret '\(key)' of \(pluginID) can no longer be decrypted because its data key was shredded; delete it (plugboard secret delete) or set it again"
                )
            } catch let error as SecureStorageError where error.code == .integrityFailure {
                throw BoardError(
                    .integrity,
                    "the secret '\(key)' of \(pluginID) failed its integrity check (it or its data key was altered, or copied from another plug-in, key or version), so nothing was returned; set it again, and find out who edited the board"
                )
            }
            guard let value = opened else { throw missing }
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "secret.get", targetType: "plugin", targetID: pluginID, after: Self.slot(key, record.dataKeyVersion)))
            return value
        }
    }

    /// Removes the secret stored under `key` for `pluginID`, with a `secret.delete` audit row. Removing a secret
    /// that does not exist changes nothing and writes nothing.
    ///
    /// Needs an owner or maintainer of the plug-in, or an admin.
    public func deleteSecret(forKey key: String, pluginID: String, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        let key = try Self.validatedKeyName(key)
        return try changePlugin(pluginID, action: "secret.delete", doing: "delete the secrets of", actor: actor) { db, engine in
            guard let record = try BoardVaultTransaction(db: db).sealedValue(pluginID: pluginID, key: key) else {
                return ChangeResult(changed: false, "\(pluginID) has no secret named '\(key)'; nothing changed.")
            }
            try engine.removeValue(forKey: key, pluginID: pluginID)
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "secret.delete", targetType: "plugin", targetID: pluginID,
                    before: Self.slot(key, record.dataKeyVersion), after: Self.slot(key, nil)))
            return ChangeResult(changed: true, "Deleted the secret '\(key)' of \(pluginID).")
        }
    }

    // MARK: Keys (audited)

    /// Rotates the master key to `newKey`: every data key is rewrapped, values are untouched, the key check value
    /// is replaced, and a `keys.rotate_master` audit row (old and new key ids) is appended, in one transaction.
    /// Needs an admin.
    ///
    /// Storing `newKey` where the key provider finds it is the caller's job; store it **before** calling, so that
    /// no crash leaves the board needing a key that exists nowhere. ``rotateMasterKeyFile(to:actor:)`` does the
    /// whole procedure for a key file.
    public func rotateMasterKey(to newKey: MasterKey, actor: Actor) throws(BoardError) -> ChangeResult {
        let boardID = try board.info("board_id")
        let refusal = AuditEntry(action: "keys.rotate_master", targetType: "board", targetID: boardID)
        let result: ChangeResult = try change(actor, refusal: refusal) { db, engine in
            try requireAdmin(db, actor: actor, doing: "rotate the master key")
            let oldID = engine.masterKeyIdentifier
            guard newKey != engine.masterKey else {
                throw BoardError(.invalidInput, "the new master key is the board's current key (id \(oldID)); rotate to a new random key")
            }
            let count = try engine.rotateMasterKey(to: newKey)
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "keys.rotate_master", targetType: "board", targetID: boardID,
                    before: .object(["key_id": .string(oldID)]),
                    after: .object(["key_id": .string(newKey.identifier), "rewrapped_data_keys": .int(count)])))
            return ChangeResult(
                changed: true,
                "Rotated the master key from id \(oldID) to id \(newKey.identifier): rewrapped \(count) data key(s); no value was re-encrypted."
            )
        }
        engine.adoptMasterKey(newKey)
        return withCheckpointNote(result, about: "the data keys wrapped under the old master key")
    }

    /// Rotates the master key kept in the key file `<board>.key`, in the order that no crash can break:
    ///
    /// 1. `newKey` is written to `<board>.key.next` (mode 0600, never overwriting);
    /// 2. the board is rotated to it in one transaction (``rotateMasterKey(to:actor:)``);
    /// 3. `<board>.key.next` is renamed over `<board>.key` and the directory synced.
    ///
    /// A crash between 2 and 3 leaves the board's key in `<board>.key.next`; opening the board then says so.
    ///
    /// - Throws: ``BoardError`` with code `masterKey` when the key does not come from a key file (an environment
    ///   variable cannot be rewritten by Plugboard), `conflict` when `<board>.key.next` exists (a rotation was
    ///   interrupted before its transaction: remove it), or any error of ``rotateMasterKey(to:actor:)``. After
    ///   step 1 fails or step 2 fails, `<board>.key.next` is removed and nothing changed.
    public func rotateMasterKeyFile(to newKey: MasterKey = .generate(), actor: Actor) throws(BoardError) -> ChangeResult {
        guard case .keyFile(let path) = keySource else {
            throw BoardError(
                .masterKey,
                "the master key comes from \(keySource), not from a key file, so plugboard cannot store the new key; give the new key to \(keySource) yourself and rotate to it (plugboard keys rotate --new-key-env VAR)"
            )
        }
        let next = Self.nextKeyFilePath(path)
        if access(next, F_OK) == 0 {
            throw BoardError(
                .conflict,
                "\(next) exists, left by an interrupted master-key rotation, and this board does not use it (its key is \(path)); remove \(next) and rotate again"
            )
        }
        do {
            try KeyFileProvider.write(newKey, to: next)
        } catch {
            throw BoardError(.masterKey, Self.sentence(error.message))
        }
        let result: ChangeResult
        do {
            result = try rotateMasterKey(to: newKey, actor: actor)
        } catch {
            unlink(next)
            throw error
        }
        do {
            try KeyFileProvider.move(next, to: path)
        } catch {
            throw BoardError(
                .masterKey,
                "the board now uses the new master key (id \(newKey.identifier)), which is in \(next), but it could not be moved over \(path) (\(Self.sentence(error.message))); run mv \(next) \(path) now"
            )
        }
        return result
    }

    /// Starts a new data key version for `pluginID` (the old one is retired and still opens the values it sealed);
    /// with `reencrypt`, also moves the plug-in's values to the new key. One transaction with a
    /// `keys.rotate_data_key` audit row. Needs an owner or maintainer of the plug-in, or an admin.
    public func rotateDataKey(pluginID: String, reencrypt: Bool = false, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        return try changePlugin(pluginID, action: "keys.rotate_data_key", doing: "rotate the data key of", actor: actor) { db, engine in
            let rotation = try engine.rotateDataKey(pluginID: pluginID, reencrypt: reencrypt)
            var after: [String: AuditJSON] = ["active_version": .int(rotation.newVersion)]
            var message = "Rotated the data key of \(pluginID): version \(rotation.newVersion) seals new values"
            if let previous = rotation.previousVersion {
                message += "; version \(previous) is retired and still opens the values it sealed"
            }
            var notes: [String] = []
            if let moved = rotation.reencryption {
                after["reencrypted_values"] = .int(moved.reencryptedValueCount)
                after["unreadable_keys"] = .array(moved.unreadableKeys.map(AuditJSON.string))
                message += "; re-encrypted \(moved.reencryptedValueCount) value(s) with the new version"
                if !moved.unreadableKeys.isEmpty {
                    notes.append(
                        "\(moved.unreadableKeys.count) secret(s) could not be re-encrypted because their data key was shredded: \(moved.unreadableKeys.map { "'\($0)'" }.joined(separator: ", ")); delete them or set them again."
                    )
                }
            }
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "keys.rotate_data_key", targetType: "plugin", targetID: pluginID,
                    before: .object(["active_version": rotation.previousVersion.map(AuditJSON.int) ?? .null]),
                    after: .object(after)))
            return ChangeResult(changed: true, message + ".", notes: notes)
        }
    }

    /// Destroys every data key of `pluginID`: its secrets stay listed but can no longer be decrypted. One
    /// transaction with a `keys.shred` audit row (versions and counts, with `reason`), then a WAL checkpoint so
    /// that the erased wrapped keys do not linger in the WAL. Shredding a plug-in with no live data key changes
    /// nothing. Needs an owner or maintainer of the plug-in, or an admin.
    ///
    /// Copies of the board made before (backups, replicas) still hold the wrapped keys, and open with the master
    /// key; rotate the master key afterwards to make those copies useless with the new key.
    public func shredDataKeys(pluginID: String, reason: String? = nil, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        if let reason { try Validate.reason(reason) }
        let result: ChangeResult = try changePlugin(
            pluginID, action: "keys.shred", doing: "shred the data keys of", reason: reason, actor: actor
        ) { db, engine in
            let shredding = try engine.shredDataKeys(pluginID: pluginID)
            guard !shredding.shreddedVersions.isEmpty else {
                return ChangeResult(changed: false, "\(pluginID) has no data key left to shred; nothing changed.")
            }
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "keys.shred", targetType: "plugin", targetID: pluginID, reason: reason,
                    before: .object(["live_versions": .array(shredding.shreddedVersions.map(AuditJSON.int))]),
                    after: .object([
                        "live_versions": .array([]), "shredded_versions": .array(shredding.shreddedVersions.map(AuditJSON.int)),
                        "unreadable_values": .int(shredding.unreadableValueCount),
                    ])))
            let versions = shredding.shreddedVersions.map(String.init).joined(separator: ", ")
            return ChangeResult(
                changed: true,
                "Shredded data key version(s) \(versions) of \(pluginID): its \(shredding.unreadableValueCount) stored secret(s) can no longer be decrypted.",
                notes: [
                    "Backups and replicas of the board made before now still hold the old wrapped keys; rotate the master key (plugboard keys rotate) to make them useless with the new key."
                ])
        }
        return result.changed ? withCheckpointNote(result, about: "the shredded wrapped keys") : result
    }

    // MARK: Transactions

    /// Runs `body` in one board transaction (``Board/change(_:refusal:_:)``: not-allowed and not-found refusals are
    /// audited) with an engine that joins it. The engine checks the master key first, so a wrong key is refused
    /// before anything else is read or written, and writes no audit row. Secure-storage errors become
    /// ``BoardError``s.
    private func change<T>(
        _ actor: Actor, refusal: AuditEntry, _ body: (Database, SecretsEngine) throws -> T
    ) throws(BoardError) -> T {
        let key = engine.masterKey
        return try board.change(actor, refusal: refusal) { db in
            do {
                let joined = try SecretsEngine(
                    vault: JoinedTransactionVault(db: db), masterKey: key, configuration: engine.configuration)
                return try body(db, joined)
            } catch let error as SecureStorageError {
                let stored = try? BoardVaultTransaction(db: db).keyCheckValue()
                throw Self.boardError(error, key: key, source: keySource, boardPath: board.path, storedCheck: stored ?? nil)
            }
        }
    }

    /// Runs `body` as a change of one plug-in's secrets or data keys (``change(_:refusal:_:)``), after checking that
    /// the plug-in is registered and that the actor is one of its owners or maintainers, or an admin.
    private func changePlugin<T>(
        _ pluginID: String, action: String, doing what: String, reason: String? = nil, actor: Actor,
        _ body: (Database, SecretsEngine) throws -> T
    ) throws(BoardError) -> T {
        let refusal = AuditEntry(action: action, targetType: "plugin", targetID: pluginID, reason: reason)
        return try change(actor, refusal: refusal) { db, engine in
            try requirePlugin(db, pluginID)
            try requirePluginRole(db, actor: actor, pluginID: pluginID, roles: [.owner, .maintainer], doing: what)
            return try body(db, engine)
        }
    }

    /// Checkpoints the WAL after a change that erased key material, and adds a note if a reader kept the
    /// checkpoint from completing.
    private func withCheckpointNote(_ result: ChangeResult, about what: String) -> ChangeResult {
        if (try? board.checkpointWAL()) == true { return result }
        return ChangeResult(
            changed: result.changed, result.message,
            notes: result.notes + [
                "Another process was reading the board, so the WAL still holds \(what) until the next checkpoint (any later write, or sqlite3 \(board.path) 'PRAGMA wal_checkpoint(TRUNCATE)')."
            ])
    }

    // MARK: Errors

    /// The path of the next key file during a rotation: `<key file>.next`.
    static func nextKeyFilePath(_ keyFile: String) -> String { keyFile + ".next" }

    /// The audit JSON of one secret slot: its key name and the data key version of its value (`null`: no value).
    private static func slot(_ key: String, _ version: Int?) -> AuditJSON {
        .object(["key": .string(key), "data_key_version": version.map(AuditJSON.int) ?? .null])
    }

    private static func validatedKeyName(_ key: String) throws(BoardError) -> String {
        do {
            return try SecureStorageLimits.validatedKeyName(key)
        } catch {
            throw boardError(error)
        }
    }

    /// A secure-storage error as a ``BoardError``: invalid names and sizes are invalid input, failed integrity
    /// checks are integrity failures, shredded keys a conflict, a wrong or missing master key a `masterKey` error.
    static func boardError(
        _ error: SecureStorageError, key: MasterKey? = nil, source: MasterKeySource? = nil, boardPath: String = "",
        storedCheck: Data? = nil
    ) -> BoardError {
        switch error.code {
        case .invalidKeyName, .invalidNamespace, .valueTooLarge:
            return BoardError(.invalidInput, sentence(error.message))
        case .integrityFailure:
            return BoardError(.integrity, sentence(error.message))
        case .keysShredded:
            return BoardError(.conflict, sentence(error.message))
        case .notInitialized:
            return BoardError(
                .masterKey,
                "the secure storage of the board at \(boardPath) has no master key yet (the board predates secure storage, or its plugboard init was interrupted); run plugboard keys init"
            )
        case .wrongMasterKey:
            guard let key, let source else { return BoardError(.masterKey, sentence(error.message)) }
            let expected = storedCheck.flatMap(MasterKey.identifier(ofKeyCheckValue:)).map { "id \($0)" } ?? "another key"
            var remedy = "use the board's own key (\(EnvironmentKeyProvider.defaultVariableName), else the key file beside the board)"
            if case .keyFile(let path) = source {
                let next = nextKeyFilePath(path)
                if let storedCheck, let nextKey = try? KeyFileProvider(path: next).loadMasterKey(),
                    nextKey.matches(keyCheckValue: storedCheck)
                {
                    remedy =
                        "a master-key rotation was interrupted after the board switched to its new key, which is in \(next); run mv \(next) \(path)"
                } else {
                    remedy =
                        "restore the board's key file \(path) from your backup, or set \(EnvironmentKeyProvider.defaultVariableName) to the board's key"
                }
            } else if case .environment(let variable) = source {
                remedy =
                    "set \(variable) to the board's key (after a master-key rotation, to the new one), or unset it to use the key file beside the board"
            }
            return BoardError(
                .masterKey,
                "this master key does not belong to this board (\(source) holds the key with id \(key.identifier); the board expects \(expected)); nothing was read or written: \(remedy)"
            )
        default:
            return BoardError(.io, sentence(error.message))
        }
    }

    /// A key provider's failure as a ``BoardError``. A missing key file is explained by the board's state: a board
    /// without a key check value needs `plugboard keys init`; an initialised one needs its key file restored.
    private static func missingKeyError(_ error: KeyProviderError, board: Board, source: MasterKeySource) throws(BoardError)
        -> BoardError
    {
        if error.code == .notFound, case .keyFile(let path) = source {
            guard let stored = try board.read({ db in try BoardVaultTransaction(db: db).keyCheckValue() }) else {
                return boardError(SecureStorageError(.notInitialized, ""), boardPath: board.path)
            }
            let id = MasterKey.identifier(ofKeyCheckValue: stored) ?? "unknown"
            return BoardError(
                .masterKey,
                "the master key file \(path) does not exist, and the board's secrets need the key with id \(id); restore the key file from your backup (mode 0600), or set \(EnvironmentKeyProvider.defaultVariableName) to that key"
            )
        }
        return BoardError(.masterKey, sentence(error.message))
    }

    /// A message of the secrets engine or a key provider, as one CLI sentence: lower-case first letter (unless the
    /// word is an acronym), no final period.
    package static func sentence(_ message: String) -> String {
        var text = message
        if text.hasSuffix(".") { text.removeLast() }
        guard let first = text.first, first.isUppercase else { return text }
        let second = text.dropFirst().first
        if let second, second.isUppercase { return text }
        return first.lowercased() + text.dropFirst()
    }
}

extension Board {
    /// The non-secret id of the board's master key (from its key check value), or `nil` if the board's secure
    /// storage was never initialised. Needs no key.
    public func masterKeyIdentifier() throws(BoardError) -> String? {
        try read { db in try BoardVaultTransaction(db: db).keyCheckValue() }.flatMap(MasterKey.identifier(ofKeyCheckValue:))
    }

    /// The secrets of `pluginID`: names, data key versions and whether they can still be decrypted, never values.
    /// Needs no master key: key names are not secret.
    ///
    /// - Throws: ``BoardError`` with code `notFound` if the plug-in is not registered.
    public func secretEntries(pluginID: String) throws(BoardError) -> [SecretEntry] {
        try Validate.pluginID(pluginID)
        return try read { db in
            try requirePlugin(db, pluginID)
            return try Row.fetchAll(
                db, sql: "SELECT * FROM secret_inventory WHERE plugin_id = ?", arguments: [pluginID]
            ).map { row in
                SecretEntry(
                    pluginID: row["plugin_id"], key: row["key"], dataKeyVersion: row["data_key_version"],
                    dataKeyState: row["data_key_state"], readable: row["readable"], updatedAt: row["updated_at"])
            }.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        }
    }

    /// The data keys of `pluginID`, or of every plug-in when `nil`, in plug-in and version order. Needs no master
    /// key; never returns key material.
    public func dataKeyEntries(pluginID: String? = nil) throws(BoardError) -> [DataKeyEntry] {
        if let pluginID { try Validate.pluginID(pluginID) }
        return try read { db in
            if let pluginID { try requirePlugin(db, pluginID) }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT k.plugin_id, k.version, k.state, k.encryption_count, k.created_at, k.retired_at,
                           (SELECT count(*) FROM secret_values v WHERE v.plugin_id = k.plugin_id AND v.data_key_version = k.version) AS value_count
                    FROM secret_data_keys k WHERE ?1 IS NULL OR k.plugin_id = ?1 ORDER BY k.plugin_id, k.version
                    """,
                arguments: [pluginID]
            ).map { row in
                DataKeyEntry(
                    pluginID: row["plugin_id"], version: row["version"], state: row["state"],
                    encryptionCount: row["encryption_count"], valueCount: row["value_count"],
                    createdAt: row["created_at"], retiredAt: row["retired_at"])
            }
        }
    }
}
