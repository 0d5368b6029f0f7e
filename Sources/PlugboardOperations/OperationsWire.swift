import Foundation
package import PlugboardModel

/// What the operations API's server and its client agree on beyond the JSON: headers, statuses.
package enum OperationsWire {
    /// A note about an answer (what the CLI prints on stderr as `note:`); one header per note.
    package static let noteHeader = "Plugboard-Note"
    /// The principal automation declares it acts for (the CLI's `--as`), recorded beside the token's principal.
    package static let onBehalfOfHeader = "Plugboard-On-Behalf-Of"

    /// When a change that waits for approvals is to be applied once approved (the CLI's `--at`).
    package static let changeAtHeader = "Plugboard-Change-At"
    /// Apply a change that waits for approvals at once, as an emergency, for this reason (the CLI's `--emergency
    /// --reason`); percent-encoded as ``headerValue(_:)`` writes.
    package static let emergencyHeader = "Plugboard-Emergency"
    /// On a `202 Accepted` answer: the number of the change request the operation opened (or applied as an emergency);
    /// the body is a `ChangeRequestResult`.
    package static let changeRequestHeader = "Plugboard-Change-Request"

    /// The change options of a request's headers.
    package static func changeOptions(_ at: String?, _ emergency: String?) throws(BoardError) -> ChangeOptions {
        for value in [at, emergency].compactMap({ $0 }) where value.utf8.count > 3000 {
            throw BoardError.invalid("a change header is longer than 3000 bytes")
        }
        return ChangeOptions(at: at, emergencyReason: emergency.map(headerText))
    }

    /// The HTTP status of a refusal with `code`.
    package static func status(for code: BoardError.Code) -> Int {
        switch code {
        case .invalidInput: 400
        case .notAllowed: 403
        case .notFound: 404
        case .conflict: 409
        case .integrity: 409
        case .schemaMismatch, .notABoard, .masterKey: 503
        default: 500
        }
    }

    /// A header value for `text`: printable ASCII as it is, anything else (and `%`) percent-encoded.
    package static func headerValue(_ text: String) -> String {
        var allowed = CharacterSet(charactersIn: " !\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~")
        allowed.formUnion(CharacterSet(charactersIn: "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// The text a ``headerValue(_:)`` holds.
    package static func headerText(_ value: String) -> String {
        value.removingPercentEncoding ?? value
    }
}
