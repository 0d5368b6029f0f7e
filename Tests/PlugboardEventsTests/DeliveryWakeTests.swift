import Foundation
import PlugboardBoardSecureStorage
import PlugboardModel
import PlugboardSecureStorage
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardEvents

/// Delivery inside a process that already watches the board (`plugboard serve`) looks at the board when that watch
/// rings, not on a poll of its own.
@Suite("webhook delivery woken by the server's look at the board", .timeLimit(.hangGuard))
struct DeliveryWakeTests {
    /// A board with its secure storage, in a folder of its own.
    static func board() throws -> (folder: URL, board: Board, admin: Principal) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-wake-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let admin = try Principal(osUser: "tester")
        let board = try Board.create(at: folder.appendingPathComponent("board.sqlite").path, by: admin)
        _ = try BoardSecureStorage.initialize(board: board, by: admin, environment: EnvironmentKeyProvider(environment: [:]))
        return (folder, board, admin)
    }

    @Test func aRingAfterANewAuditRowWakesTheEndpointsAndNoPollDoes() async throws {
        let (folder, board, admin) = try Self.board()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Neither the backstop nor the cursor interval comes round during the test: only a ring makes delivery look.
        var settings = WebhookSettings()
        settings.cursorInterval = .seconds(7200)
        settings.ringWait = .seconds(7200)
        let changes = Wakeup()
        let secrets = try BoardSecureStorage.open(board: board, environment: EnvironmentKeyProvider(environment: [:]))
        let delivery = try WebhookDelivery(board: board, secrets: secrets, settings: settings, via: "test")
        let running = Task { await delivery.run(boardChanges: changes) }
        defer { running.cancel() }

        // The first look finds the log's head and wakes the endpoints once.
        try await eventually("delivery's first look") { delivery.wakeup.generation == 1 }
        _ = try board.createFlag("after.start", by: admin)
        // Without a ring, the new row is not looked for: give a look every chance to happen, then ring.
        try await Task.sleep(for: .seconds(1))
        #expect(delivery.wakeup.generation == 1, "delivery looked at the board without a ring")
        changes.wake()
        try await eventually("delivery to look at the ring and wake the endpoints") { delivery.wakeup.generation == 2 }

        // A ring without a new audit row wakes no endpoint.
        changes.wake()
        try await Task.sleep(for: .seconds(1))
        #expect(delivery.wakeup.generation == 2)
        running.cancel()
        await running.value
    }
}
