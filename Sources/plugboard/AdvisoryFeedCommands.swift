import ArgumentParser
import Crypto
import Dispatch
import Foundation
import PlugboardEvents
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import Synchronization

/// `plugboard advisory feed …`: publishing a signed advisory feed, and subscribing to one.
struct AdvisoryFeedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed", abstract: "Publish a signed advisory feed; subscribe to, list, fetch and unsubscribe from feeds.",
        discussion: """
            plugboard serve fetches each subscribed feed at its interval; on a board no server serves, plugboard advisory \
            feed fetch fetches them once.
            """,
        subcommands: [Publish.self] + commands(AdvisoryFeedOperations.all) + [Fetch.self])

    /// `advisory feed publish --key FILE --out FILE [--expires 7d] [--sequence N]`.
    struct Publish: BoardCommand {
        static let localOnly: String? = "it signs with private key files on this machine"
        static let configuration = CommandConfiguration(
            commandName: "publish", abstract: "Write the board's advisories as a signed, expiring feed, for a publisher to host.",
            discussion: """
                The feed is a DSSE envelope whose payload lists every advisory's OSV document, exactly as imported, with \
                a sequence, an expiry and a head (a hash of the documents and of the previous feed's head); each --key \
                (a file from plugboard signing-key generate, mode 0600) adds an Ed25519 signature. The sequence is \
                --sequence, else the time of publishing in milliseconds since 1970; when --out already holds a feed \
                signed by one of the keys, the new sequence must be greater than its own, and the new feed names its \
                head as the previous one. The file is replaced whole, never half-written.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("A private key file to sign with (repeat for several signatures).", valueName: "file"))
        var key: [String] = []
        @Option(help: ArgumentHelp("Where to write the feed.", valueName: "file")) var out: String
        @Option(help: ArgumentHelp("How long the feed stands: 1h to 365d, for example 12h or 7d.", valueName: "duration"))
        var expires = "7d"
        @Option(help: "The feed's sequence (default: the time in milliseconds since 1970).") var sequence: Int64?

        func validate() throws {
            if key.isEmpty { throw ValidationError("give at least one private key (--key FILE) to sign the feed with") }
            if Self.seconds(expires) == nil {
                throw ValidationError("--expires '\(expires)' is not a duration of 1h to 365d, for example 7d")
            }
            if let sequence, sequence < 1 { throw ValidationError("--sequence must be 1 or more") }
        }

        func execute(_ output: Output) throws(BoardError) {
            var keys: [Curve25519.Signing.PrivateKey] = []
            for path in key { keys.append(try SigningKeyFile.read(path)) }
            let board = try global.openBoard()
            let documents = try board.advisoryDocuments()
            let now = Date()
            let previous = try Self.previous(out, keys: keys)
            let sequence = self.sequence ?? Int64(now.timeIntervalSince1970 * 1000)
            if let previous, sequence <= previous.sequence {
                throw BoardError(
                    .invalidInput,
                    "\(out) holds the feed of sequence \(previous.sequence); a new feed needs a greater one (--sequence), nothing was written"
                )
            }
            let head = AdvisoryFeed.head(sequence: sequence, previousHead: previous?.head, documents: documents)
            let content = AdvisoryFeedContent(
                type: AdvisoryFeed.contentType, ecosystem: AdvisoryFeed.ecosystem, sequence: sequence, published: Timestamp.format(now),
                expires: Timestamp.format(now.addingTimeInterval(TimeInterval(Self.seconds(expires) ?? 604_800))),
                previousHead: previous?.head,
                head: head, documents: documents)
            let data = try AdvisoryFeed.envelope(content, signedBy: keys)
            guard data.count <= AdvisoryFeed.maximumSize else {
                throw BoardError(.invalidInput, "the feed would be larger than \(AdvisoryFeed.maximumSize >> 20) MiB; nothing was written")
            }
            do { try data.write(to: URL(fileURLWithPath: out), options: .atomic) } catch {
                throw BoardError(.io, "cannot write the feed to \(out): \(error.localizedDescription)")
            }
            let keyIDs = keys.map { SigningKeys.keyID(publicKey: $0.publicKey.rawRepresentation) }
            if output.json {
                output.printJSON(
                    FeedPublished(
                        out: out, sequence: sequence, head: head, expires: content.expires, advisories: documents.count, keyIDs: keyIDs))
                return
            }
            print(
                "Wrote the feed \(out): \(documents.count) \(documents.count == 1 ? "advisory" : "advisories"), sequence \(sequence), head \(head.prefix(16)), expires \(content.expires), signed by \(keyIDs.joined(separator: ", "))."
            )
        }

        /// The feed `path` holds, when it exists: checked with the public halves of `keys`.
        static func previous(_ path: String, keys: [Curve25519.Signing.PrivateKey]) throws(BoardError) -> AdvisoryFeedContent? {
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            let data = try BoundedInput.read(path: path, limit: AdvisoryFeed.maximumSize, what: "feed")
            let trusted = keys.map { $0.publicKey.rawRepresentation.base64EncodedString() }
            do { return try AdvisoryFeed.open(data, trusting: trusted, now: Date()).content } catch {
                throw BoardError(
                    .invalidInput,
                    "\(path) exists and is not a feed signed by these keys (\(error.message)); choose another --out or remove it")
            }
        }

        /// `12h` or `7d` in seconds, between 1 hour and 365 days.
        static func seconds(_ text: String) -> Int? {
            let scale = text.hasSuffix("d") ? 86400 : text.hasSuffix("h") ? 3600 : 0
            guard scale > 0, let value = Int(text.dropLast()), value > 0, value * scale <= 365 * 86400 else { return nil }
            return value * scale
        }
    }

    /// What `publish --json` prints.
    struct FeedPublished: Encodable {
        let out: String
        let sequence: Int64
        let head: String
        let expires: String
        let advisories: Int
        let keyIDs: [String]
    }

    /// What `fetch --json` prints for each feed when no name is given.
    struct FeedFetched: Encodable {
        let name: String
        let changed: Bool
        let message: String?
        let notes: [String]
        var error: String? = nil
    }

    /// `advisory feed fetch [NAME]`: fetch once, verify, apply.
    struct Fetch: BoardCommand {
        static let localOnly: String? = "it fetches the feeds from this machine and writes the board's file as the feed"
        static let configuration = CommandConfiguration(
            commandName: "fetch", abstract: "Fetch a subscribed feed (or every one) once, verify it and apply what changed.",
            discussion: """
                What plugboard serve does at each feed's interval, once, for a board no server serves. Each feed is \
                applied as plugboard/advisory-feed via the feed, or refused with a sentence and nothing changed. Exits 1 \
                when a feed was refused.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The subscription (default: every one).") var name: String?
        @Flag(help: "Fetch feeds on private and loopback addresses too, over http too (never link-local or reserved ones).")
        var allowPrivate = false
        @Option(help: ArgumentHelp("How long one fetch may take, for drills and tests: 30s, 2s", visibility: .hidden))
        var timeout: String?

        func execute(_ output: Output) throws(BoardError) {
            var settings = AdvisoryFeedSettings()
            settings.allowPrivate = allowPrivate
            if let timeout = timeout.flatMap(WebhookSettings.schedule)?.first { settings.timeout = timeout }
            let fetcher = AdvisoryFeedFetcher(board: try global.openBoard(), settings: settings)
            let name = self.name
            let outcome = Mutex<[(name: String, result: Result<ChangeResult, BoardError>)]>([])
            let done = DispatchSemaphore(value: 0)
            Task {
                let results: [(name: String, result: Result<ChangeResult, BoardError>)]
                if let name {
                    do throws(BoardError) {
                        results = [(name, .success(try await fetcher.fetch(name)))]
                    } catch { results = [(name, .failure(error))] }
                } else {
                    do throws(BoardError) { results = try await fetcher.fetchAll() } catch { results = [("", .failure(error))] }
                }
                outcome.withLock { $0 = results }
                done.signal()
            }
            done.wait()
            let results = outcome.withLock { $0 }
            if name != nil, let only = results.first {
                output.report(try only.result.get())
                return
            }
            if results.isEmpty {
                print("The board subscribes to no advisory feed.")
                return
            }
            var refused = 0
            if output.json {
                output.printJSON(
                    results.map { feed, result in
                        switch result {
                        case .success(let change):
                            FeedFetched(name: feed, changed: change.changed, message: change.message, notes: change.notes)
                        case .failure(let error): FeedFetched(name: feed, changed: false, message: nil, notes: [], error: error.message)
                        }
                    })
                refused = results.filter { if case .failure = $0.result { true } else { false } }.count
                if refused > 0 {
                    throw BoardError(.conflict, "\(refused) of \(results.count) feeds were refused; nothing of them was applied")
                }
                return
            }
            for (feed, result) in results {
                switch result {
                case .success(let change): print(([change.message] + change.notes).joined(separator: "\n"))
                case .failure(let error):
                    refused += 1
                    Output.printError(feed.isEmpty ? error.message : "\(feed): \(error.message)")
                }
            }
            if refused > 0 { throw BoardError(.conflict, "\(refused) of \(results.count) feeds were refused; nothing of them was applied") }
        }
    }
}
