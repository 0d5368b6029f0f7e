import Foundation
public import Logging
import PlugboardBoardSecureStorage
public import PlugboardHost
public import PlugboardModel
public import PlugboardPluginAPI
import PlugboardSecureStorage
package import PlugboardStore

extension HostConfiguration {
    /// The board file, when the source is one (``BoardFileSource``). A board opened read-only works: the host cannot
    /// write load reports then, and says so once.
    package var board: Board? { (source as? BoardFileSource)?.board }

    /// Creates a configuration with defaults: poll every 100 ms, no flags (gated plug-ins stay off), no secure
    /// storage (plug-ins asking for it get a clear error), empty configuration slices.
    package init(
        board: Board, identity: HostIdentity, pollInterval: Duration = .milliseconds(100),
        secureStorage: @escaping @Sendable (String) throws -> any SecureStorage = { id in UnavailableSecureStorage(pluginID: id) },
        flags: any HostFlagProvider = NoFlags(),
        configuration: @escaping @Sendable (String) -> PluginConfiguration = { _ in PluginConfiguration() },
        services: ServiceRegistry = ServiceRegistry(),
        logger: Logger = Logger(label: "plugboard.host"),
        dynamicLibraryCache: String = NSTemporaryDirectory()
    ) {
        self.init(
            source: BoardFileSource(board: board), identity: identity, pollInterval: pollInterval, secureStorage: secureStorage,
            flags: flags,
            configuration: configuration, services: services, logger: logger, dynamicLibraryCache: dynamicLibraryCache)
    }

    /// A host of the board file at `path`, set up as most host apps want it: the board opened once for the whole
    /// process, its flags for the identity's environment (``BoardFlagProvider``), and its secure storage, encrypted
    /// under the master key (`PLUGBOARD_MASTER_KEY`, else `<board>.key`). When the master key cannot be had, each
    /// plug-in that asks for secure storage gets one that says why on every call; the host and the plug-ins keep
    /// running.
    ///
    /// - Parameters:
    ///   - stateFolder: Where the host keeps its anchor and its crash journal (see
    ///     ``PlugboardHost/HostConfiguration/stateFolder``).
    /// - Throws: ``PlugboardModel/BoardError`` when the board cannot be opened.
    public init(
        boardAt path: String, identity: HostIdentity, stateFolder: String? = nil,
        configuration: @escaping @Sendable (String) -> PluginConfiguration = { _ in PluginConfiguration() },
        services: ServiceRegistry = ServiceRegistry(), logger: Logger = Logger(label: "plugboard.host")
    ) throws(BoardError) {
        let board = try Board.open(at: path)
        self.init(
            board: board, identity: identity, secureStorage: Self.secureStorage(of: board),
            flags: BoardFlagProvider(board: board, environment: identity.environment), configuration: configuration, services: services,
            logger: logger)
        self.stateFolder = stateFolder
    }

    /// Secure storage for each plug-in from `board`'s secrets (see ``init(boardAt:identity:stateFolder:configuration:services:logger:)``).
    package static func secureStorage(of board: Board) -> @Sendable (String) throws -> any SecureStorage {
        let secrets: Result<BoardSecureStorage, BoardError> = Result { () throws(BoardError) in try BoardSecureStorage.open(board: board) }
        return { pluginID in
            switch secrets {
            case .success(let secrets): return try secrets.storage(forPlugin: pluginID)
            case .failure(let error): return UnavailableSecureStorage(pluginID: pluginID, why: error.message)
            }
        }
    }
}
