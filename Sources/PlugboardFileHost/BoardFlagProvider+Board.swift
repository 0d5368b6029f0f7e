public import Foundation
public import Logging
public import PlugboardHost
public import PlugboardStore

extension BoardFlagProvider {
    /// Compiles the environment's flags from `board`: pass the host's own ``Board``, so that flags, secure storage
    /// and the registry share one connection. It only reads. If the flags cannot be read now, every evaluation returns its
    /// default with the error code `PROVIDER_NOT_READY` until a later ``refresh()`` succeeds; the problem is logged.
    public convenience init(
        board: Board, environment: String, hostname: String? = ProcessInfo.processInfo.hostName,
        logger: Logger = Logger(label: "plugboard.flags")
    ) {
        self.init(
            environment: environment, hostname: hostname, logger: logger, features: { try board.featureSet(environment: environment) },
            version: { try board.version() })
        refresh()
    }
}
