public import ArgumentParser
import Crypto
import Foundation
import PlugboardBoardSecureStorage
public import PlugboardModel
import PlugboardNetwork
package import PlugboardStore
package import Synchronization

extension WebhookFormat: ExpressibleByArgument {}

/// Webhook endpoints: where the audit log's rows are sent, signed, as events (`plugboard webhook …`). Adding one and
/// rotating its secret need the board's master key, which seals the secret; every change is an admin's.
public enum WebhookOperations {
    /// `plugboard webhook …`, in the order its help lists them.
    package static let all: [any ParsedOperation.Type] = [
        Add.self, List.self, Show.self, Disable.self, Enable.self, Remove.self, RotateSecret.self, Replay.self, Test.self,
    ]

    /// Whether `webhook add` accepts a URL written with a private or loopback address: set by
    /// `plugboard serve --webhook-allow-private` for the process, false elsewhere.
    package static let allowPrivateAddresses = Mutex(false)

    /// `webhook add NAME URL [--events …] [--env ENV] [--format …]`: prints the secret once.
    public struct Add: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .webhookAdd, .write, abstract: "Send the audit log's events to a URL, signed; prints the endpoint's secret once (admins).",
            discussion: """
                Events are the audit log's rows from now on, in seq order, at least once, signed with Standard Webhooks \
                1.0 headers (v1 HMAC-SHA256 with the secret printed here, v1a Ed25519 with the board's webhook key, \
                whose public half webhook show prints). The URL must be http or https; a URL written with a loopback, \
                private, link-local or metadata address is refused unless the server runs with \
                --webhook-allow-private, and delivery checks every address a name resolves to before it connects.
                """, response: "WebhookSecret", environmentOptional: true, answerIsSecret: true)
        @Argument(help: "A name for the endpoint, for example ops-chat.") public var name: String
        @Argument(help: "Where events are posted (http:// or https://).") public var url: String
        @Option(help: ArgumentHelp("The actions sent, separated by commas: plugin.kill,change.*,… (default: all).", valueName: "actions"))
        public var events: String = "*"
        @Option(help: "standard (Standard Webhooks JSON), slack, teams or datadog.") public var format: WebhookFormat = .standard
        /// With `--env`: only that environment's events (and those of no environment).
        public var env: String?
        public init() {}
        public init(name: String, url: String, events: String = "*", env: String? = nil, format: WebhookFormat = .standard) {
            self.name = name
            self.url = url
            self.events = events
            self.env = env
            self.format = format
        }
        public func validate() throws {
            do {
                try Validate.webhookName(name)
                try Validate.webhookEvents(events)
            } catch { throw ValidationError(error.message) }
        }
        /// What it answers.
        public typealias Response = WebhookSecret
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let checked = try WebhookAddress.check(url, allowPrivate: WebhookOperations.allowPrivateAddresses.withLock { $0 })
            let secrets = try BoardSecureStorage.open(board: board)
            let (text, key) = WebhookOperations.newSecret()
            let signingKey = try board.webhookSigningKey() ?? secrets.newWebhookSigningKey()
            let result = try board.addWebhook(
                NewWebhook(
                    name: name, url: checked.absoluteString, events: events, environment: env, format: format,
                    sealedSecret: secrets.sealWebhookSecret(key, name: name), signingKey: signingKey), by: actor)
            return OperationReply(
                WebhookSecret(name: name, secret: text, publicKey: try board.webhookSigningKey()?.publicKey ?? "", message: result.message))
        }
        package static func text(_ created: WebhookSecret) -> String? { WebhookOperations.secretText(created) }
    }

    /// `webhook rotate-secret NAME`: prints the new secret once.
    public struct RotateSecret: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .webhookRotateSecret, .write, abstract: "Give an endpoint a new secret; prints it once (admins).",
            discussion: "Deliveries from now on are signed with the new secret; give it to the receiver first, or accept both for a while.",
            response: "WebhookSecret", answerIsSecret: true)
        @Argument(help: "The endpoint.") public var name: String
        public init() {}
        public init(name: String) { self.name = name }
        /// What it answers.
        public typealias Response = WebhookSecret
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let secrets = try BoardSecureStorage.open(board: board)
            let (text, key) = WebhookOperations.newSecret()
            let result = try board.rotateWebhookSecret(name, sealedSecret: secrets.sealWebhookSecret(key, name: name), by: actor)
            return OperationReply(
                WebhookSecret(name: name, secret: text, publicKey: try board.webhookSigningKey()?.publicKey ?? "", message: result.message))
        }
        package static func text(_ created: WebhookSecret) -> String? { WebhookOperations.secretText(created) }
    }

    /// A new endpoint secret: `whsec_` and the base64 of 32 random bytes (Standard Webhooks' form), and those bytes.
    static func newSecret() -> (text: String, key: Data) {
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return ("whsec_" + key.base64EncodedString(), key)
    }

    static func secretText(_ created: WebhookSecret) -> String {
        """
        \(created.message)
        Secret (shown once; the receiver verifies v1 signatures with it): \(created.secret)
        Board webhook public key (Ed25519, v1a): \(created.publicKey)
        """
    }

    /// `webhook list`.
    public struct List: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .webhookList, .read, abstract: "List the webhook endpoints: URL, filters, format, and how delivery goes.",
            response: "WebhookList")
        public init() {}
        /// What it answers.
        public typealias Response = [WebhookEndpoint]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.webhooks())
        }
        package static func text(_ endpoints: [WebhookEndpoint]) -> String? {
            Table.listing(
                endpoints, "NAME", "URL", "EVENTS", "FORMAT", "STATE", "CURSOR", "LAST",
                empty: "No webhooks; add one with plugboard webhook add NAME URL."
            ) { endpoint in
                [
                    endpoint.name, endpoint.url, endpoint.events + (endpoint.environment.map { " in \($0)" } ?? ""),
                    endpoint.format.rawValue, WebhookOperations.state(endpoint), String(endpoint.cursor),
                    endpoint.lastError ?? endpoint.lastStatus.map(String.init) ?? "-",
                ]
            }
        }
    }

    static func state(_ endpoint: WebhookEndpoint) -> String {
        if !endpoint.enabled { return "disabled" }
        if endpoint.failing { return "failing since \(endpoint.failingSince ?? "")" }
        if endpoint.attempts > 0 { return "retrying (\(endpoint.attempts) failed)" }
        return "ok"
    }

    /// `webhook show NAME`.
    public struct Show: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .webhookShow, .read, abstract: "Show an endpoint, and the board's webhook public key that receivers pin.")
        @Argument(help: "The endpoint.") public var name: String
        public init() {}
        public init(name: String) { self.name = name }
        /// What it answers.
        public typealias Response = WebhookDetail
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(
                WebhookDetail(
                    endpoint: try board.webhook(name), publicKey: try board.webhookSigningKey()?.publicKey,
                    boardID: try board.info("board_id") ?? ""))
        }
        package static func text(_ detail: WebhookDetail) -> String? {
            let endpoint = detail.endpoint
            return """
                Webhook \(endpoint.name): \(endpoint.url)
                Events: \(endpoint.events)\(endpoint.environment.map { " in \($0)" } ?? ""); format: \(endpoint.format.rawValue)
                State: \(WebhookOperations.state(endpoint)); delivered through seq \(endpoint.cursor)
                Last answer: \(endpoint.lastError ?? endpoint.lastStatus.map(String.init) ?? "none yet")
                webhook-id: \(detail.boardID):SEQ
                Board webhook public key (Ed25519, v1a): \(detail.publicKey ?? "none yet")
                """
        }
    }

    /// `webhook disable NAME`: a stop.
    public struct Disable: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .webhookDisable, .stop, abstract: "Stop sending to an endpoint; it keeps its cursor (admins).")
        @Argument(help: "The endpoint.") public var name: String
        public init() {}
        public init(name: String) { self.name = name }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.setWebhookEnabled(name, false, by: actor))
        }
    }

    /// `webhook enable NAME`.
    public struct Enable: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .webhookEnable, .write, abstract: "Send to an endpoint again, from its cursor on (admins).")
        @Argument(help: "The endpoint.") public var name: String
        public init() {}
        public init(name: String) { self.name = name }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.setWebhookEnabled(name, true, by: actor))
        }
    }

    /// `webhook remove NAME`: a stop.
    public struct Remove: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(.webhookRemove, .stop, abstract: "Remove an endpoint (admins).")
        @Argument(help: "The endpoint.") public var name: String
        public init() {}
        public init(name: String) { self.name = name }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.removeWebhook(name, by: actor))
        }
    }

    /// `webhook replay NAME --from SEQ`.
    public struct Replay: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .webhookReplay, .write, abstract: "Send an endpoint the events from an audit seq on again (admins).")
        @Argument(help: "The endpoint.") public var name: String
        @Option(help: "The first audit seq sent again.") public var from: Int64
        public init() {}
        public init(name: String, from: Int64) {
            self.name = name
            self.from = from
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.replayWebhook(name, from: from, by: actor))
        }
    }

    /// `webhook test NAME`: an audit row that only that endpoint receives.
    public struct Test: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .webhookTest, .write, abstract: "Send an endpoint a test event (an audit row only it receives) (admins).")
        @Argument(help: "The endpoint.") public var name: String
        public init() {}
        public init(name: String) { self.name = name }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.testWebhook(name, by: actor))
        }
    }
}
