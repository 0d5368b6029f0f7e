import PlugboardModel
import PlugboardOperations

/// `/ui/webhooks`: the board's webhook endpoints, for admins: where events go, which ones, how far delivery got and
/// whether one fails, with a test event, disable or enable, and remove. An endpoint is added, and its secret rotated,
/// with the CLI or the API, which show the secret once.
struct WebhooksPage: ConsoleView {
    static let template = "webhooks"

    /// Whether the person is an admin, who sees the endpoints.
    let admin: Bool
    let endpoints: [Endpoint]

    /// One endpoint, and what the template cannot read of it.
    struct Endpoint: Sendable {
        let endpoint: WebhookEndpoint
        /// Its environment, or `every`.
        let environment: String
        /// `enabled`, `disabled`, or `failing since …` for one that has failed for a day.
        let state: String
        let controls: ControlsView?
    }

    static func read(_ reads: ConsoleReads) throws -> WebhooksPage {
        let page = reads.page
        guard let endpoints = try ConsolePages.adminsOnly({ () throws(BoardError) in try reads.perform(WebhookOperations.List()) })
        else { return WebhooksPage(admin: false, endpoints: []) }
        return WebhooksPage(
            admin: true,
            endpoints: endpoints.map { endpoint in
                let fixed = ["name": endpoint.name]
                let forms: [String?] = [
                    endpoint.enabled
                        ? ConsoleForms.form(WebhookOperations.Test.self, page, fixed: fixed, button: "Send a test event") : nil,
                    endpoint.enabled
                        ? ConsoleForms.form(WebhookOperations.Disable.self, page, fixed: fixed, button: "Disable", danger: true)
                        : ConsoleForms.form(WebhookOperations.Enable.self, page, fixed: fixed, button: "Enable"),
                    ConsoleForms.form(WebhookOperations.Remove.self, page, fixed: fixed, button: "Remove", danger: true),
                ]
                let state =
                    !endpoint.enabled ? "disabled" : endpoint.failing ? "failing since \(endpoint.failingSince ?? "a day")" : "enabled"
                return Endpoint(
                    endpoint: endpoint, environment: endpoint.environment ?? "every", state: state, controls: .of(forms))
            })
    }
}
