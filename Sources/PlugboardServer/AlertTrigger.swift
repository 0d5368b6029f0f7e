import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardVersioning

/// `POST /api/triggers/alertmanager`: Prometheus Alertmanager's webhook receiver, which stops plug-ins and never starts
/// one.
///
/// The body is Alertmanager's webhook message (version 4): `alerts[]`, each with `status`, `labels`, `annotations`,
/// `fingerprint` and `startsAt`. Each `firing` alert whose label `plugin` (``ServerConfiguration/alertPluginLabel``)
/// names a plug-in, and optionally whose label `version` names one of its versions, throws a kill switch over it, as
/// `plugboard plugin kill` does: the reason is the alert's `summary` annotation (else its `alertname`), the actor the
/// token's principal with that principal's rights, and `via` says `alertmanager` and the alert's name. A kill of what is
/// already killed changes nothing. A `resolved` alert revives nothing: reviving stays a person's decision. An alert
/// that names no plug-in, an unknown one, or one the principal may not kill is skipped, and the answer says why.
///
/// Any access token whose principal may kill is accepted, and a token of scope ``AccessTokenScope/stop`` only here; a
/// read-only token is refused. The token is checked before the body is read; the body is bounded (``maxBodyBytes``,
/// ``maxAlerts``); the kills run in the stops' lane, where no change request and no flood of reads or changes waits.
struct AlertTrigger: Sendable {
    /// The route's path.
    static let path = "/api/triggers/alertmanager"
    /// The largest body taken.
    static let maxBodyBytes = 256 << 10
    /// The most alerts in one message (Alertmanager's `max_alerts` keeps a group under it).
    static let maxAlerts = 1000
    /// The label that names a version.
    static let versionLabel = "version"
    /// The longest reason kept: ``Validate/reason(_:)``'s limit.
    static let maxReason = 1000

    let admin: OperationsRoutes

    func add(to router: Router<ServeContext>) {
        let authentication = OperationsAuthentication(
            board: admin.board, failures: admin.failures, recognized: admin.recognized, guesses: admin.guesses, access: .stop,
            action: .pluginKill, lane: admin.stops, acceptsStopTokens: true)
        router.group().add(middleware: authentication).on(RouterPath(Self.path), method: .post) { request, context in
            try await self.receive(request, context)
        }
    }

    /// One alert of the message, as much of it as the trigger reads: every field may be missing.
    struct Alert: Decodable, Sendable {
        let status: String?
        let labels: [String: String]?
        let annotations: [String: String]?
        let fingerprint: String?
        let startsAt: String?
    }

    /// The message: only its alerts are read.
    struct Message: Decodable, Sendable {
        let alerts: [Alert]
    }

    /// What became of one alert, for the answer.
    struct Outcome: Sendable {
        enum Kind: String { case stopped, unchanged, skipped }
        let kind: Kind
        let alert: String
        let fingerprint: String
        let target: KillTarget?
        let sentence: String

        var json: [String: Any] {
            var object: [String: Any] = ["alert": alert, "fingerprint": fingerprint, "message": sentence]
            if let id = target?.pluginID { object["plugin"] = id }
            if let version = target?.versionText { object["version"] = version }
            return object
        }
    }

    private func receive(_ request: Request, _ context: ServeContext) async throws -> Response {
        let caller = try context.requireCaller()
        let buffer: ByteBuffer
        switch await Body.collect(request, limit: Self.maxBodyBytes) {
        case .success(let collected): buffer = collected
        case .failure(.tooLarge(let limit)): throw OperationsRoutes.tooLarge(limit)
        case .failure(.unreadable): throw BoardError(.invalidInput, "the request body could not be read; send it again")
        }
        return try await OperationsRoutes.afterBody {
            let message = try await HeavyWork.run(heavy: buffer.readableBytes > HeavyWork.smallBody) { () throws -> Message in
                try Self.decode(Data(buffer.readableBytesView))
            }
            guard message.alerts.count <= Self.maxAlerts else {
                throw Refusal(
                    BoardError(
                        .invalidInput,
                        "the message holds \(message.alerts.count) alerts, more than \(Self.maxAlerts); set max_alerts in the webhook receiver's configuration"
                    ), status: .contentTooLarge)
            }
            let (board, label, token) = (admin.board, admin.configuration.alertPluginLabel, caller.token?.name)
            let (osUser, address) = (caller.principal.osUser, caller.address)
            let outcomes = try await admin.stops.run { () throws -> [Outcome] in
                try Self.stop(message.alerts, on: board, label: label) { alert throws(BoardError) in
                    let tokenPart = token.map { "token \($0) from \(address)" } ?? "from \(address)"
                    return try Principal(
                        osUser: osUser, via: "alertmanager alert \(Self.prefix(alert, bytes: 250)) (\(tokenPart))", accessToken: token)
                }
            }
            var answer: [String: Any] = [:]
            for kind in [Outcome.Kind.stopped, .unchanged, .skipped] {
                answer[kind.rawValue] = outcomes.filter { $0.kind == kind }.map(\.json)
            }
            return Reply.json(.ok, object: answer)
        }
    }

    /// The message in `data`, or a `400` that says in one sentence what is wrong with it.
    static func decode(_ data: Data) throws -> Message {
        do {
            return try JSONDecoder().decode(Message.self, from: data)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            throw BoardError(.invalidInput, "the body is not JSON; send Alertmanager's webhook message (version 4)")
        } catch let error as DecodingError {
            throw BoardError(
                .invalidInput, "the body is not Alertmanager's webhook message (version 4): \(where: error) is missing or of the wrong type"
            )
        } catch {
            throw BoardError(.invalidInput, "the body is not JSON; send Alertmanager's webhook message (version 4)")
        }
    }

    /// Kills what each firing alert of `alerts` names, as the principal `actor` makes of the alert's name; each target
    /// once, however many alerts name it. Runs in the stops' lane. A failure of the board (not a refusal) is thrown:
    /// the sender sends the message again, and what was killed before stays killed.
    static func stop(
        _ alerts: [Alert], on board: Board, label: String, actor: (String) throws(BoardError) -> Principal
    ) throws -> [Outcome] {
        var done: [KillTarget: (Outcome.Kind, String)] = [:]
        return try alerts.map { alert in
            let name = clean(alert.labels?["alertname"] ?? "", limit: 200)
            let fingerprint = clean(alert.fingerprint ?? "", limit: 64)
            func outcome(_ kind: Outcome.Kind, _ target: KillTarget?, _ sentence: String) -> Outcome {
                Outcome(kind: kind, alert: name, fingerprint: fingerprint, target: target, sentence: sentence)
            }
            guard alert.status == "firing" else {
                return outcome(
                    .skipped, nil,
                    alert.status == "resolved"
                        ? "resolved: a resolved alert revives nothing; reviving stays a person's decision (plugboard plugin revive)"
                        : "its status is not firing")
            }
            guard let id = alert.labels?[label], !id.isEmpty else {
                return outcome(.skipped, nil, "it has no label \(label) naming a plug-in")
            }
            let target: KillTarget
            if let text = alert.labels?[versionLabel], !text.isEmpty {
                guard let version = SemanticVersion(parsing: text) else {
                    return outcome(.skipped, nil, "its label \(versionLabel) '\(clean(text, limit: 80))' is not a semantic version")
                }
                target = .version(id, version)
            } else {
                target = .plugin(id)
            }
            if let (kind, sentence) = done[target] { return outcome(kind, target, sentence) }
            let summary = clean(alert.annotations?["summary"] ?? "", limit: maxReason)
            let reason = !summary.isEmpty ? summary : !name.isEmpty ? name : "an Alertmanager alert"
            let result: (Outcome.Kind, String)
            do {
                let changed = try board.kill(target, reason: reason, by: try actor(name))
                result = (changed.changed ? .stopped : .unchanged, changed.message)
            } catch let error as BoardError where [BoardError.Code.invalidInput, .notFound, .notAllowed].contains(error.code) {
                result = (.skipped, error.message)
            }
            done[target] = result
            return outcome(result.0, target, result.1)
        }
    }

    /// The longest start of `text` of at most `bytes` bytes of UTF-8, whole characters only.
    static func prefix(_ text: String, bytes: Int) -> String {
        var kept = 0
        var end = text.startIndex
        for index in text.indices {
            kept += text[index].utf8.count
            guard kept <= bytes else { break }
            end = text.index(after: index)
        }
        return String(text[..<end])
    }

    /// `text` as one line of plain text: the characters ``Validate/isUnsafe(_:)`` names become spaces, runs of spaces
    /// one, and at most `limit` characters are kept.
    static func clean(_ text: String, limit: Int) -> String {
        var scalars = String.UnicodeScalarView()
        var space = false
        for scalar in text.unicodeScalars {
            let blank = Validate.isUnsafe(scalar) || scalar == " "
            if blank, space || scalars.isEmpty { continue }
            scalars.append(blank ? " " : scalar)
            space = blank
        }
        let line = String(scalars).trimmingCharacters(in: .whitespaces)
        return line.count > limit ? String(line.prefix(limit)) : line
    }
}

extension String.StringInterpolation {
    /// Where a decoding error is, as a path into the message: `alerts[2].labels`, or `the message`.
    fileprivate mutating func appendInterpolation(where error: DecodingError) {
        let path: [any CodingKey]
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): path = context.codingPath
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        @unknown default: path = []
        }
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + AlertTrigger.clean(key.stringValue, limit: 40)
            }
        }
        appendLiteral(text.isEmpty ? "the message" : text)
    }
}
