import Foundation

@testable import PlugboardServer

/// Checks templates against the views they render: every `{{name}}` and `{{#section}}` a template uses must be a field
/// of the view (looked up as Mustache looks it up: in the section's value, then in the values around it), and every
/// field of every view must be used by a template. A view may hold an answer of the board (a `ChangeRequest`, a
/// `FlagDetail`): the template reads the fields it needs, and the answer's other fields need no template. The
/// examples must set every field of a view, and every field of an answer that a template reads: no optional nil, no
/// list empty, so that the walk reaches every nested value. Of Mustache's transforms, `empty(…)`, `count(…)`,
/// `reversed(…)`, `first(…)` and `last(…)` are understood.
struct ConsoleTemplateCheck {
    /// A template's tags, sections holding theirs.
    indirect enum Tag {
        case variable(String)
        case section(String, inverted: Bool, [Tag])
    }

    /// What is wrong, one sentence each: in the templates' names, and in the examples of the fields they read.
    var problems: [String] {
        var seen: Set<String> = []
        let fields = fieldProblems.filter { Self.isView($0.type) || used[$0.type]?.contains($0.field) == true }.map(\.sentence)
        return walkProblems + fields.filter { seen.insert($0).inserted }
    }

    private var walkProblems: [String] = []
    /// What an example leaves unset, or an optional a value around it shadows: a problem for every field of a view,
    /// and for the fields of an answer that a template reads.
    private var fieldProblems: [(type: String, field: String, sentence: String)] = []
    /// The fields of every value met, by type.
    private var fields: [String: Set<String>] = [:]
    /// The fields some template used, by type.
    private var used: [String: Set<String>] = [:]

    /// Walks the template `name` (its text `text`) with `view`.
    mutating func check(template name: String, _ text: String, with view: Any) {
        do {
            let tags = try Self.parse(text)
            register(view, outer: [], template: name)
            walk(tags, [view], template: name)
        } catch {
            walkProblems.append("the template \(name) does not parse: \(error)")
        }
    }

    /// The fields of views that no template used; call after every template was checked.
    func unused() -> [String] {
        fields.filter { Self.isView($0.key) }.flatMap { type, labels in
            labels.subtracting(used[type] ?? []).sorted().map { "\(type).\($0)" }
        }.sorted()
    }

    /// Whether `type` (a ``typeName(_:)``) is one of the console's views, not an answer of the board.
    private static func isView(_ type: String) -> Bool {
        !type.hasPrefix("PlugboardModel.") && !type.hasPrefix("PlugboardFlags.") && !type.hasPrefix("Swift.")
    }

    // MARK: The walk

    private mutating func walk(_ tags: [Tag], _ stack: [Any], template: String) {
        for tag in tags {
            switch tag {
            case .variable(let name):
                guard name != "." else { continue }
                _ = lookUp(name, in: stack, template: template)
            case .section(let name, let inverted, let inner):
                guard let value = lookUp(name, in: stack, template: template) else { continue }
                if inverted {
                    walk(inner, stack, template: template)
                } else if value is Bool {
                    walk(inner, stack, template: template)
                } else if Mirror(reflecting: value).displayStyle == .collection {
                    for element in Mirror(reflecting: value).children.map(\.value) {
                        register(element, outer: stack, template: template)
                        walk(inner, stack + [element], template: template)
                    }
                } else {
                    register(value, outer: stack, template: template)
                    walk(inner, stack + [value], template: template)
                }
            }
        }
    }

    /// The value of `name` (`a.b` for `b` of `a`), found as Mustache finds it; nil (and a problem) when no value
    /// around has it.
    private mutating func lookUp(_ name: String, in stack: [Any], template: String) -> Any? {
        if name.hasSuffix(")"), let open = name.firstIndex(of: "(") {
            let transform = String(name[..<open])
            let argument = String(name[name.index(after: open)..<name.index(before: name.endIndex)])
            guard let value = lookUp(argument, in: stack, template: template) else { return nil }
            let elements = Mirror(reflecting: value).children.map(\.value)
            switch transform {
            case "empty": return elements.isEmpty
            case "count": return elements.count
            case "reversed": return value
            case "first": return elements.first
            case "last": return elements.last
            default:
                walkProblems.append("the template \(template) uses {{\(name)}}: the check does not know the transform \(transform)")
                return nil
            }
        }
        let parts = name.split(separator: ".").map(String.init)
        guard let first = parts.first else { return nil }
        var value: Any?
        for frame in stack.reversed() {
            if let child = child(first, of: frame) {
                value = child
                break
            }
        }
        guard var found = value else {
            let around = stack.map { Self.typeName($0) }.joined(separator: " in ")
            walkProblems.append("the template \(template) uses {{\(name)}}, which is not a field of \(around)")
            return nil
        }
        for part in parts.dropFirst() {
            register(found, outer: [], template: template)
            guard let child = child(part, of: found) else {
                walkProblems.append("the template \(template) uses {{\(name)}}: \(Self.typeName(found)) has no field \(part)")
                return nil
            }
            found = child
        }
        return found
    }

    /// The field `label` of `value`, unwrapped, marked used; nil when it has none. A dictionary's field is its value
    /// of the key `label` (the request's query).
    private mutating func child(_ label: String, of value: Any) -> Any? {
        if let dictionary = value as? [String: String] { return dictionary[label] }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .struct, let field = mirror.children.first(where: { $0.label == label }) else { return nil }
        used[Self.typeName(value), default: []].insert(label)
        return Self.unwrapped(field.value) ?? field.value
    }

    /// Notes the fields of `value` (a view or an answer), and what the example leaves unset: a nil optional, an empty list, or an
    /// optional that a value around it also has (a nil one would render that one's instead).
    private mutating func register(_ value: Any, outer: [Any], template: String) {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .struct else { return }
        let type = Self.typeName(value)
        for child in mirror.children {
            guard let label = child.label else { continue }
            fields[type, default: []].insert(label)
            let field = Mirror(reflecting: child.value)
            if field.displayStyle == .optional {
                if field.children.isEmpty {
                    fieldProblems.append((type, label, "the example of \(type) leaves \(label) nil: set every field"))
                }
                if let shadowed = outer.first(where: { self.has(label, $0) }) {
                    fieldProblems.append(
                        (
                            type, label,
                            "\(type).\(label) is optional and \(Self.typeName(shadowed)) around it has a field \(label) too: a nil one renders that one's in \(template)"
                        ))
                }
            }
            if field.displayStyle == .collection, field.children.isEmpty {
                fieldProblems.append((type, label, "the example of \(type) leaves \(label) empty: give it one element"))
            }
        }
    }

    private func has(_ label: String, _ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .struct && mirror.children.contains { $0.label == label }
    }

    private static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first?.value
    }

    private static func typeName(_ value: Any) -> String {
        String(reflecting: type(of: value)).replacingOccurrences(of: "PlugboardServer.", with: "")
    }

    // MARK: Tags

    struct ParseError: Error, CustomStringConvertible {
        let description: String
    }

    /// The tags of `text`: `{{name}}`, `{{{name}}}`, `{{&name}}`, `{{#name}}…{{/name}}`, `{{^name}}…{{/name}}`;
    /// comments (`{{!…}}`) are skipped. Partials and delimiter changes are refused: the console's templates use none.
    static func parse(_ text: String) throws -> [Tag] {
        var open: [(name: String, inverted: Bool, tags: [Tag])] = [("", false, [])]
        var rest = Substring(text)
        while let start = rest.range(of: "{{") {
            rest = rest[start.upperBound...]
            let triple = rest.hasPrefix("{")
            let close = triple ? "}}}" : "}}"
            guard let end = rest.range(of: close) else { throw ParseError(description: "a tag is not closed") }
            var content = rest[rest.startIndex..<end.lowerBound]
            if triple { content = content.dropFirst() }
            rest = rest[end.upperBound...]
            var body = content.trimmingCharacters(in: .whitespaces)
            let sigil = triple ? nil : body.first.flatMap { "#^/&!>=".contains($0) ? $0 : nil }
            if sigil != nil { body = String(body.dropFirst()).trimmingCharacters(in: .whitespaces) }
            switch sigil {
            case "!": continue
            case ">", "=": throw ParseError(description: "{{\(content)}}: partials and delimiter changes are not checked")
            case "#", "^": open.append((body, sigil == "^", []))
            case "/":
                guard open.count > 1, let section = open.popLast(), section.name == body else {
                    throw ParseError(description: "{{/\(body)}} closes no open section of that name")
                }
                open[open.count - 1].tags.append(.section(section.name, inverted: section.inverted, section.tags))
            default: open[open.count - 1].tags.append(.variable(body))
            }
        }
        guard open.count == 1 else { throw ParseError(description: "{{#\(open.last?.name ?? "")}} is never closed") }
        return open[0].tags
    }
}
