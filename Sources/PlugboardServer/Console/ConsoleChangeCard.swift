import Foundation
import PlugboardFlags
import PlugboardModel
import PlugboardOperations

/// One change request as the console shows it, on the list and on its own page: what it changes (every row, before and
/// after, field by field), who asked, its approvals and whether each still counts, its schedule, and the forms the person
/// looking may use on it.
struct ChangeCard {
    /// The states of a request that may still be approved, rejected or cancelled.
    static let pending: Set<String> = ["open", "scheduled"]

    let request: ChangeRequest
    let viewer: ChangesPage.Viewer
    let page: ConsolePage

    /// The card's view, its title a heading of level `heading` (`h1` on the request's own page).
    func view(heading: String) -> ChangeCardView {
        let (forms, notes) = controls()
        return ChangeCardView(
            heading: heading, sub: heading == "h1" ? "h2" : "h4", link: heading != "h1", request: request,
            pending: Self.pending.contains(request.state), counted: "\(request.currentApprovals) of \(request.required)",
            met: request.currentApprovals >= request.required, rows: request.rows.map(Self.row), controls: .of(forms, notes: notes))
    }

    /// The forms the viewer may use on the request, and the sentences that say why one is not offered.
    func controls() -> (forms: [String], notes: [String]) {
        let id = ["id": String(request.id)]
        let me = viewer.name
        var forms: [String?] = []
        var notes: [String] = []
        if page.readOnly {
            if Self.pending.contains(request.state) || (request.emergency && request.acknowledgedBy == nil) {
                notes.append("Your session is read-only: sign in with a token created without --read-only to act on it.")
            }
            return ([], notes)
        }
        if Self.pending.contains(request.state) {
            if request.author == me {
                notes.append("You opened this request; another person approves it.")
                forms.append(form(ChangeOperations.Cancel.self, id, button: "Cancel request \(request.id)", danger: true))
            } else if request.signed {
                notes.append(
                    "Approvals of this request must be signed: approve it with plugboard change approve \(request.id) --key FILE.")
            } else if request.approvals.contains(where: { $0.principal == me && $0.current }) {
                notes.append("You approved this request; your approval counts.")
            } else if let person = viewer.person, person == request.authorPerson {
                notes.append(
                    "Your access token '\(page.principal.accessToken ?? "")' goes back to \(person), who is behind this request: sign in with a token of your own to approve it."
                )
            } else {
                let again = request.approvals.contains { $0.principal == me }
                forms.append(
                    form(ChangeOperations.Approve.self, id, omit: ["key_id", "signature"], button: again ? "Approve again" : "Approve"))
            }
            if request.author != me {
                forms.append(form(ChangeOperations.Reject.self, id, button: "Reject", danger: true))
            }
            if request.currentApprovals >= request.required, request.scheduledAt == nil {
                if request.authorApplies {
                    notes.append(
                        "Its answer is a secret, so \(request.author) applies it with plugboard change apply \(request.id), which shows it once."
                    )
                } else {
                    forms.append(form(ChangeOperations.Apply.self, id, button: "Apply"))
                }
            }
        }
        if request.emergency, request.acknowledgedBy == nil {
            if request.closedBy == me {
                notes.append("You applied this emergency change; another board admin acknowledges it.")
            } else if viewer.admin {
                forms.append(form(ChangeOperations.Acknowledge.self, id, button: "Acknowledge"))
            } else {
                notes.append("A board admin other than \(request.closedBy ?? request.author) acknowledges this emergency change.")
            }
        }
        return (forms.compactMap { $0 }, notes)
    }

    private func form<Op: ParsedOperation>(
        _ type: Op.Type, _ fixed: [String: String], omit: Set<String> = [], button: String, danger: Bool = false
    ) -> String? {
        ConsoleForms.form(type, page, fixed: fixed, omit: omit, button: button, danger: danger)
    }

    // MARK: The rows

    /// One row the request changes: its fields that change, before and after, and those that stay.
    static func row(_ row: ChangeRow) -> ChangeCardView.Row {
        let before = row.before.flatMap(object)
        let after = row.after.flatMap(object)
        guard before != nil || after != nil else {
            // Not an object: the texts as they are.
            return ChangeCardView.Row(
                change: row, fields: [.init(name: "value", before: row.before ?? "–", after: row.after ?? "–")], same: nil)
        }
        let keys = Set((before ?? [:]).keys).union((after ?? [:]).keys).sorted()
        var changed: [ChangeCardView.Field] = []
        var same: [String] = []
        for key in keys {
            let old = before.map { text($0[key], field: key) } ?? "–"
            let new = after.map { text($0[key], field: key) } ?? "–"
            if old == new {
                same.append("\(key) \(old)")
            } else {
                changed.append(.init(name: key, before: old, after: new))
            }
        }
        return ChangeCardView.Row(change: row, fields: changed, same: same.isEmpty ? nil : same.joined(separator: "; "))
    }

    private static func object(_ text: String) -> [String: Value]? {
        guard case .object(let members) = try? JSONDecoder().decode(Value.self, from: Data(text.utf8)) else { return nil }
        return members
    }

    /// A field's value as people read it: a string as it is, nothing as `none`, a flag's strategies as the flag's
    /// page reads them, anything else as compact JSON.
    static func text(_ value: Value?, field: String = "") -> String {
        switch value {
        case nil, .null?: return "none"
        case .string(let string)?: return string
        case let value?:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let json = try? encoder.encode(value) else { return "?" }
            if field == "strategies", let strategies = try? JSONDecoder().decode([Strategy].self, from: json) {
                return strategies.isEmpty ? "none" : strategies.map(FlagPage.strategyText).joined(separator: "; ")
            }
            return String(decoding: json, as: UTF8.self)
        }
    }

    /// A JSON value: of a row's state, or of the request a form stands for.
    indirect enum Value: Codable, Equatable {
        case null
        case bool(Bool)
        case int(Int)
        case double(Double)
        case string(String)
        case array([Value])
        case object([String: Value])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int.self) {
                self = .int(value)
            } else if let value = try? container.decode(Double.self) {
                self = .double(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([Value].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: Value].self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let value): try container.encode(value)
            case .int(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .object(let value): try container.encode(value)
            }
        }
    }
}
