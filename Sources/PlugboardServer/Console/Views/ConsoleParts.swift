/// An environment in a `<select>` that switches the page to it.
struct EnvironmentChoice: Sendable {
    let name: String
    let selected: Bool

    /// The environments for a `<select>`, the shown one selected.
    static func list(_ all: [String], _ selected: String) -> [EnvironmentChoice] {
        all.map { EnvironmentChoice(name: $0, selected: $0 == selected) }
    }
}

/// An environment as a link to its page of plug-ins.
struct EnvironmentLink: Sendable {
    let name: String
    let href: String
}

/// One row of the audit log, on the Overview and the Audit page.
struct AuditRowView: Sendable {
    let seq: Int64
    let at: String
    /// Who, and for whom when one acted for another.
    let by: String
    /// The client the change came through (`console from ADDRESS`).
    let via: String?
    let action: String
    let refused: Bool
    let target: String
    let reason: String
    /// Whether the row has a before or an after.
    let change: Bool
    let before: String
    let after: String
}

/// The form of one operation (`form.mustache`), made by ``ConsoleForms``.
struct FormView: ConsoleView {
    static let template = "form"
    /// The operation's name: the form posts to `/ui/do/{operation}`.
    let operation: String
    let csrf: String
    /// The page the answer leads back to.
    let returnTo: String
    /// A stop (kill, disable, yank): drawn as one.
    let danger: Bool
    let button: String
    /// The fields the page fixes, as hidden inputs.
    let fixed: [FormFixedField]
    /// The inputs.
    let fields: [FormInput]
}

/// A hidden field of a form.
struct FormFixedField: Sendable {
    let name: String
    let value: String
}

/// One input of a form: a checkbox, a `<select>` or a text field, as the operation's field is declared.
struct FormInput: Sendable {
    let id: String
    let name: String
    let label: String
    let checkbox: Bool
    let choices: Bool
    /// The `<select>`'s options.
    let options: [FormOption]
    let text: Bool
    /// The text field's type: `text` or `number`.
    let type: String
    let required: Bool
    /// The value the operation takes when the field is left empty.
    let placeholder: String?
}

/// One option of a `<select>`.
struct FormOption: Sendable {
    let value: String
    let label: String
    let selected: Bool
}
