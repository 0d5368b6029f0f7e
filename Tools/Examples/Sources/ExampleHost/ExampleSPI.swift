import Foundation
import PlugboardHost
import PlugboardPluginAPI
import PlugboardSecureStorage
import PlugboardStore

/// The SPI implementations this example host injects.
enum ExampleSPI {
    /// Secure storage for one plug-in: the board's, encrypted under the master key (`PLUGBOARD_MASTER_KEY`, else
    /// `<board>.key`). If the key cannot be had, plug-ins get a storage that says why on every call, and the host
    /// and every plug-in keep running.
    static func secureStorage(board: Board) -> @Sendable (String) throws -> any SecureStorage {
        let secrets: Result<BoardSecretStore, BoardError> = Result { () throws(BoardError) in
            try BoardSecretStore.open(board: board)
        }
        return { pluginID in
            switch secrets {
            case .success(let secrets): return try secrets.storage(forPlugin: pluginID)
            case .failure(let error): return UnavailableSecureStorage(pluginID: pluginID, why: error.message)
            }
        }
    }

    /// The time of day, for event lines.
    static func clock() -> String {
        Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true).time(includingFractionalSeconds: true))
    }
}
