public import Foundation
public import Logging
public import PlugboardHost
public import PlugboardModel
package import PlugboardStore

extension BoardFlagProvider {
    /// Compiles the environment's flags from `board`, the connection the host's registry and secure storage share.
    package convenience init(
        board: Board, environment: String, hostname: String? = ProcessInfo.processInfo.hostName,
        logger: Logger = Logger(label: "plugboard.flags")
    ) {
        self.init(
            environment: environment, hostname: hostname, logger: logger, features: { try board.featureSet(environment: environment) },
            version: { try board.version() })
        refresh()
    }

    /// Compiles the environment's flags from the board file at `path`, refused with a sentence when it is not a board.
    /// It only reads. If the flags cannot be read now, every evaluation returns its default with the error code
    /// `PROVIDER_NOT_READY` until a later ``refresh()`` succeeds; the problem is logged.
    public convenience init(
        boardAt path: String, environment: String, hostname: String? = ProcessInfo.processInfo.hostName,
        logger: Logger = Logger(label: "plugboard.flags")
    ) throws(BoardError) {
        self.init(board: try Board.open(at: path), environment: environment, hostname: hostname, logger: logger)
    }
}
