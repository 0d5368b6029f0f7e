import Foundation
import PlugboardModel
import PlugboardOperations

/// The console's forms, made from the operations' declarations: an operation's fields, their help as labels, their
/// kinds as inputs. A form posts to `/ui/do/{operation}`; what it sends becomes the operation's JSON request, which is
/// parsed and checked exactly as the operations API parses its body. A field is written once, in the operation.
enum ConsoleForms {
    /// The HTML of `Op`'s form: `fixed` fields are hidden (the plug-in the page shows, its environment), `omit`ted ones
    /// left out (the page's form does not offer them), the others are inputs, `require`d ones required by the form even
    /// where the operation takes none (the console asks a reason to revive), and those with `choices` a `<select>` of
    /// them (the plug-in's registered versions) instead of a text field. Nil for a read-only session, which sees no
    /// control that changes anything.
    static func form<Op: ParsedOperation>(
        _ type: Op.Type, _ page: ConsolePage, fixed: [String: String], omit: Set<String> = [], require: Set<String> = [],
        choices: [String: [FormOption]] = [:], button: String, danger: Bool = false
    ) -> String? {
        guard !page.readOnly else { return nil }
        var inputs: [FormInput] = []
        for field in OperationWire.fields(of: type) where fixed[field.name] == nil && !omit.contains(field.name) {
            let id = "\(Op.declaration.name)-\(field.name)-\(page.nextFormID())"
            func input(checkbox: Bool = false, options: [FormOption]? = nil, type: String = "text") -> FormInput {
                FormInput(
                    id: id, name: field.name, label: label(field), checkbox: checkbox, choices: options != nil, options: options ?? [],
                    text: !checkbox && options == nil, type: type, required: !field.optional || require.contains(field.name),
                    placeholder: options == nil ? field.defaultValue : nil)
            }
            switch (field.kind, field.json) {
            case (.flag, _), (_, .boolean): inputs.append(input(checkbox: true))
            case _ where choices[field.name] != nil: inputs.append(input(options: choices[field.name]))
            case _ where !field.choices.isEmpty:
                let values = field.optional && field.defaultValue == nil ? [""] + field.choices : field.choices
                inputs.append(input(options: values.map { FormOption(value: $0, label: $0, selected: false) }))
            default: inputs.append(input(type: field.json == .integer ? "number" : "text"))
            }
        }
        return ConsoleTemplates.render(
            FormView(
                operation: Op.declaration.name, csrf: page.csrf, returnTo: page.path, danger: danger, button: button,
                fixed: fixed.sorted { $0.key < $1.key }.map { FormFixedField(name: $0.key, value: $0.value) }, fields: inputs))
    }

    /// A field's label: its help, without the trailing period.
    private static func label(_ field: OperationWire.Field) -> String {
        let help = field.help.isEmpty ? field.name : field.help
        return help.hasSuffix(".") ? String(help.dropLast()) : help
    }

    /// The JSON request a form stands for: its fields that the operation declares, by their JSON kinds (a checkbox is
    /// true, a number an integer, a list comma-separated); empty inputs are absent. Anything else a form sends is
    /// ignored but `csrf` and `return`, which the console reads itself.
    static func request<Op: ParsedOperation>(_ type: Op.Type, from form: [String: String]) throws(BoardError) -> Data {
        var object: [String: ChangeCard.Value] = [:]
        for field in OperationWire.fields(of: type) {
            guard let text = form[field.name], !text.isEmpty else { continue }
            if field.repeating {
                object[field.name] = .array(
                    text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { .string($0) })
                continue
            }
            switch field.json {
            case .boolean: object[field.name] = .bool(text == "true" || text == "on")
            case .integer:
                guard let number = Int(text) else {
                    throw BoardError(
                        .invalidInput, "\(label(field)) must be a whole number, not '\(Validate.escaped(String(text.prefix(40))))'")
                }
                object[field.name] = .int(number)
            default: object[field.name] = .string(text)
            }
        }
        guard let data = try? JSONEncoder().encode(object) else {
            throw BoardError(.invalidInput, "the form cannot be sent as a \(Op.declaration.name) request")
        }
        return data
    }

    /// An `application/x-www-form-urlencoded` body's fields (the last value of a repeated name wins); nil when it is
    /// not one.
    static func fields(_ body: String) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else { return nil }
            fields[name] = value
        }
        return fields
    }

    private static func decode(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
