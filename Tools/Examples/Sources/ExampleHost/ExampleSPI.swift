import Foundation
import PlugboardHost
import PlugboardPluginAPI

/// The SPI implementations this example host injects.
enum ExampleSPI {
    /// Secure storage for one plug-in.
    static func secureStorage(boardPath: String) -> @Sendable (String) throws -> any SecureStorage {
        { pluginID in UnavailableSecureStorage(pluginID: pluginID, why: "board-backed secure storage is not wired into the example host yet") }
    }

    /// Feature flags for gates and plug-ins: the board's flags for the host's environment.
    static func flags(boardPath: String, environment: String) -> any HostFlagProvider {
        (try? BoardFlagProvider(boardPath: boardPath, environment: environment)) ?? NoFlags()
    }

    /// The time of day, for event lines.
    static func clock() -> String {
        Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true).time(includingFractionalSeconds: true))
    }
}
