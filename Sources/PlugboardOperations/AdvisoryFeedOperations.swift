public import ArgumentParser
import Foundation
public import PlugboardModel
package import PlugboardStore

/// Subscriptions to signed advisory feeds (`plugboard advisory feed …`): `plugboard serve` fetches each at its interval,
/// verifies it with its trusted keys and imports what changed, as the feed.
public enum AdvisoryFeedOperations {
    /// Every operation of the group, in the order the help lists them.
    package static let all: [any ParsedOperation.Type] = [Subscribe.self, List.self, Unsubscribe.self]

    /// `advisory feed subscribe URL --key PUBLIC_KEY [--interval 1h] [--name NAME]`.
    public struct Subscribe: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .advisoryFeedSubscribe, .write, abstract: "Subscribe the board to a signed advisory feed (admins).",
            discussion: """
                plugboard serve fetches the feed at the interval (and once at start), checks that one of its signatures is \
                by a key given with --key, that it is for the ecosystem Plugboard and that its sequence is above the last \
                one applied, then imports what changed, recorded as plugboard/advisory-feed via the feed. An expired feed \
                is applied only for what stops or refuses more. The URL must be https, or http on a loopback address; a \
                private or loopback address is fetched only when the server runs with --feed-allow-private.
                """)
        @Argument(help: "Where the feed is published (https://…/feed.json).") public var url: String
        @Option(help: "A public key trusted to sign the feed: the base64 of its 32 bytes (repeat for several).")
        public var key: [String] = []
        @Option(help: "How often plugboard serve fetches it: 1m to 7d, for example 30m, 1h, 1d.") public var interval: String = "1h"
        @Option(help: "A name for the subscription (default: the URL's host).") public var name: String?
        public init() {}
        public init(url: String, keys: [String], interval: String = "1h", name: String? = nil) {
            self.url = url
            key = keys
            self.interval = interval
            self.name = name
        }
        public func validate() throws {
            if key.isEmpty { throw ValidationError("give at least one public key (--key) that signs the feed") }
            if AdvisoryFeedOperations.seconds(interval) == nil {
                throw ValidationError("--interval '\(interval)' is not a duration of 1m to 7d, for example 30m, 1h or 1d")
            }
            do { _ = try AdvisoryFeedOperations.checkedURL(url) } catch { throw ValidationError(error.message) }
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let checked = try AdvisoryFeedOperations.checkedURL(url)
            guard let seconds = AdvisoryFeedOperations.seconds(interval) else {
                throw BoardError(.invalidInput, "--interval '\(Validate.printable(interval))' is not a duration of 1m to 7d")
            }
            let named = name ?? String((checked.host ?? "feed").prefix(64))
            return OperationReply(try board.subscribeAdvisoryFeed(name: named, url: url, keys: key, intervalSeconds: seconds, by: actor))
        }
    }

    /// `advisory feed list`.
    public struct List: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .advisoryFeedList, .read, abstract: "List the advisory feeds the board subscribes to, and the last feed applied from each.")
        public init() {}
        /// What it answers.
        public typealias Response = [AdvisoryFeedSubscription]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.advisoryFeeds())
        }
        package static func text(_ feeds: [AdvisoryFeedSubscription]) -> String? {
            Table.listing(
                feeds, "NAME", "URL", "KEYS", "EVERY", "SEQUENCE", "HEAD", "EXPIRES",
                empty: "The board subscribes to no advisory feed; subscribe with plugboard advisory feed subscribe URL --key PUBLIC_KEY."
            ) { feed in
                [
                    feed.name, feed.url, feed.keyIDs.joined(separator: ", "), "\(feed.intervalSeconds / 60)m",
                    feed.sequence.map(String.init) ?? "-", feed.head.map { String($0.prefix(16)) } ?? "-", feed.expires ?? "-",
                ]
            }
        }
    }

    /// `advisory feed unsubscribe NAME`: the advisories it brought stay.
    public struct Unsubscribe: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .advisoryFeedUnsubscribe, .write, abstract: "Stop fetching an advisory feed; the advisories it brought stay (admins).")
        @Argument(help: "The subscription's name.") public var name: String
        public init() {}
        public init(name: String) { self.name = name }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.unsubscribeAdvisoryFeed(name, by: actor))
        }
    }

    /// A duration written `30s`, `30m`, `1h` or `7d`, in seconds, when it is between 1 minute and 7 days.
    package static func seconds(_ text: String) -> Int? {
        let units: [(String, Int)] = [("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        guard let (suffix, scale) = units.first(where: { text.hasSuffix($0.0) }), let value = Int(text.dropLast(suffix.count)),
            value > 0, value <= 604_800 / scale
        else { return nil }
        let seconds = value * scale
        return (60...604_800).contains(seconds) ? seconds : nil
    }

    /// `text` when it is an http or https URL with a host, of at most 2048 characters (where it may be fetched from is
    /// checked at each fetch).
    static func checkedURL(_ text: String) throws(BoardError) -> URL {
        guard text.utf8.count <= 2048, !text.contains(where: \.isWhitespace), let url = URL(string: text),
            ["https", "http"].contains(url.scheme?.lowercased() ?? ""), !(url.host ?? "").isEmpty
        else {
            throw BoardError(
                .invalidInput, "'\(Validate.printable(String(text.prefix(100))))' is not an http or https URL of a feed")
        }
        // A password in the URL would be kept in the board and in every audit row the feed writes.
        guard url.user == nil, url.password == nil else {
            throw BoardError(
                .invalidInput, "a feed's URL must not hold a user name or password; publish the feed where it can be read without one")
        }
        return url
    }
}
