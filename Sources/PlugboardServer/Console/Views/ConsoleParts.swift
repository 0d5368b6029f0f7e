import PlugboardModel

/// An environment switcher: the environment a page shows, every environment as a `<select>`, and the page's own path
/// that the switcher's form leads to.
struct EnvironmentSwitcher: Sendable {
    /// The environment shown.
    let env: String
    /// Where the switcher's form leads: the page's own path.
    let action: String
    /// Every environment, as the `<select>`'s options.
    let choices: [FormOption]
}

/// Whether the audit log verifies (``ConsoleVerifier``), on the Overview and the Audit page.
struct VerificationView: Sendable {
    let ok: Bool
    let sentence: String
}

/// A row of an answer with the link it leads to: a plug-in or a flag to its page, a host's report of a plug-in to the
/// plug-in's page or to the host on the Fleet page, a plug-in's state in an environment to its page there, an
/// environment to its page of plug-ins.
struct LinkedRow<Item: Sendable>: Sendable {
    let item: Item
    let href: String
}

/// The forms a person may use on what a page shows, rendered, and the sentences that say why one is not offered.
struct ControlsView: Sendable {
    let forms: [String]
    let notes: [String]

    /// The controls, or nil when there is neither a form nor a note.
    static func of(_ forms: [String?], notes: [String] = []) -> ControlsView? {
        let forms = forms.compactMap { $0 }
        return forms.isEmpty && notes.isEmpty ? nil : ControlsView(forms: forms, notes: notes)
    }
}

/// One row of the audit log, on the Overview and the Audit page: the row, and what the template cannot say of it.
struct AuditRowView: Sendable {
    let record: AuditRecord
    /// Whether the change was refused (its outcome is not `ok`).
    let refused: Bool
    /// Whether the row has a before or an after.
    let change: Bool

    init(_ record: AuditRecord) {
        self.record = record
        refused = record.outcome != "ok"
        change = record.beforeJSON != nil || record.afterJSON != nil
    }
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
