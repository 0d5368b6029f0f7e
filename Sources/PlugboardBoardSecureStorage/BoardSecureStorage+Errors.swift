import Foundation
import PlugboardModel
import PlugboardPluginAPI
import PlugboardSecureStorage
import PlugboardStore

// Secure-storage and key-provider failures as board errors: the code is chosen here, the message is kept.
extension BoardSecureStorage {
    /// The path of the next key file during a rotation: `<key file>.next`.
    static func nextKeyFilePath(_ keyFile: String) -> String { keyFile + ".next" }

    /// The audit JSON of one secret slot: its key name and the data key version of its value (`null`: no value).
    static func slot(_ key: String, _ version: Int?) -> AuditJSON {
        .object(["key": .string(key), "data_key_version": version.map(AuditJSON.int) ?? .null])
    }

    static func validatedKeyName(_ key: String) throws(BoardError) -> String {
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
            return BoardError(.invalidInput, error.message)
        case .integrityFailure:
            return BoardError(.integrity, error.message)
        case .keysShredded:
            return BoardError(.conflict, error.message)
        case .notInitialized:
            return BoardError(
                .masterKey,
                "the secure storage of the board at \(boardPath) has no master key yet (the board predates secure storage, or its plugboard init was interrupted); run plugboard keys init"
            )
        case .wrongMasterKey:
            guard let key, let source else { return BoardError(.masterKey, error.message) }
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
            return BoardError(.io, error.message)
        }
    }

    /// A key provider's failure as a ``BoardError``. A missing key file is explained by the board's state: a board
    /// without a key check value needs `plugboard keys init`; an initialised one needs its key file restored.
    static func missingKeyError(_ error: KeyProviderError, board: Board, source: MasterKeySource) throws(BoardError)
        -> BoardError
    {
        if error.code == .notFound, case .keyFile(let path) = source {
            guard let stored = try board.masterKeyCheckValue() else {
                return boardError(SecureStorageError(.notInitialized, ""), boardPath: board.path)
            }
            let id = MasterKey.identifier(ofKeyCheckValue: stored) ?? "unknown"
            return BoardError(
                .masterKey,
                "the master key file \(path) does not exist, and the board's secrets need the key with id \(id); restore the key file from your backup (mode 0600), or set \(EnvironmentKeyProvider.defaultVariableName) to that key"
            )
        }
        return BoardError(.masterKey, error.message)
    }
}
