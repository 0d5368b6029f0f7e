import Foundation
import HTTPTypes
import Hummingbird
import PlugboardModel
import PlugboardOperations
import PlugboardPluginAPI

/// A request refused: thrown by a route or a middleware, and answered by Hummingbird (``HTTPResponseError``) with its
/// status, its headers and a JSON object, `{"error": CODE, "message": SENTENCE}` but for OFREP's own errors.
struct Refusal: HTTPResponseError, Sendable {
    let status: HTTPResponse.Status
    /// Headers of the answer (`Retry-After`, `WWW-Authenticate`).
    var headers: HTTPFields = [:]
    /// The answer's JSON object.
    let body: [String: String]

    /// `{"error": the status's reason phrase in lower case, "message": message}`: the SDK and host routes' refusals.
    init(_ status: HTTPResponse.Status, _ message: String) {
        self.init(status, body: ["error": status.reasonPhrase.lowercased(), "message": message])
    }

    /// `{"error": CODE, "message": SENTENCE}` of a ``BoardError``, with the status its code deserves unless `status` is
    /// given: the operations API's refusals.
    init(_ error: BoardError, status: HTTPResponse.Status? = nil) {
        self.init(
            status ?? HTTPResponse.Status(code: OperationsWire.status(for: error.code)),
            body: ["error": error.code.rawValue, "message": error.message])
    }

    /// A refusal whose answer is `body`.
    init(_ status: HTTPResponse.Status, body: [String: String]) {
        self.status = status
        self.body = body
    }

    /// How the operations API answers a failure: a refusal as it is, a ``BoardError`` with its code and sentence, anything
    /// else as a failed request (`500`).
    static func answering(_ error: any Error) -> Refusal {
        switch error {
        case let refusal as Refusal: refusal
        case let error as BoardError: Refusal(error)
        default: Refusal(BoardError(.io, "the request failed: \(error)"))
        }
    }

    /// The same refusal with `Retry-After: seconds`.
    func retryAfter(_ seconds: Int) -> Refusal {
        with(.retryAfter, String(seconds))
    }

    /// The same refusal with the header `name: value`.
    func with(_ name: HTTPField.Name, _ value: String) -> Refusal {
        var refusal = self
        refusal.headers[name] = value
        return refusal
    }

    func response(from request: Request, context: some RequestContext) -> Response {
        var response = Reply.json(status, object: body)
        response.headers.append(contentsOf: headers)
        return response
    }
}
