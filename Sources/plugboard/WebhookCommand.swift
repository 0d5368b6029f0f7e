import ArgumentParser
import Dispatch
import Foundation
import PlugboardBoardSecureStorage
import PlugboardEvents
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import Synchronization

/// `plugboard webhook …`: where the audit log's events are sent.
struct WebhookCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook", abstract: "Send the audit log's events to webhook endpoints, signed (Standard Webhooks).",
        discussion: """
            plugboard serve delivers events as they are written; on a board no server serves, plugboard webhook deliver \
            sends what waits, once.
            """,
        subcommands: commands(WebhookOperations.all) + [Deliver.self])

    /// `webhook deliver`: one pass of delivery from the board's file.
    struct Deliver: BoardCommand {
        static let localOnly: String? = "it opens the endpoints' secrets with the board's master key"
        static let configuration = CommandConfiguration(
            commandName: "deliver", abstract: "Send every endpoint the events that wait for it, once, and print what happened.",
            discussion: """
                Each endpoint is sent its events in seq order until it is caught up or an attempt fails; a failed \
                endpoint's next attempt waits for its retry schedule unless --now is given. Exits 1 when an attempt failed.
                """)
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Call endpoints on private and loopback addresses too (never link-local or reserved ones).")
        var allowPrivate = false
        @Flag(help: "Send to endpoints whose next attempt is not due yet.") var now = false
        @Option(help: ArgumentHelp("The console's address, for links in events.", valueName: "url")) var consoleURL: String?

        func execute(_ output: Output) throws(BoardError) {
            let board = try global.openBoard()
            let secrets = try BoardSecureStorage.open(board: board)
            var settings = WebhookSettings()
            settings.allowPrivate = allowPrivate
            settings.consoleURL = consoleURL
            let delivery = try WebhookDelivery(board: board, secrets: secrets, settings: settings, via: "plugboard webhook deliver")
            let result = Mutex<Result<WebhookDeliveryReport, BoardError>?>(nil)
            let done = DispatchSemaphore(value: 0)
            let force = now
            Task {
                do throws(BoardError) {
                    let report = try await delivery.deliverOnce(force: force)
                    result.withLock { $0 = .success(report) }
                } catch {
                    result.withLock { $0 = .failure(error) }
                }
                done.signal()
            }
            done.wait()
            guard let outcome = result.withLock({ $0 }) else { return }
            let report = try outcome.get()
            if output.json {
                output.printJSON(report)
            } else {
                print(report.endpoints.isEmpty ? "No enabled webhook." : report.endpoints.joined(separator: "\n"))
            }
            if report.failed > 0 { throw BoardError(.conflict, "\(report.failed) endpoint(s) failed; they are retried on their schedule") }
        }
    }
}
