import Mustache

/// A page of the console or a part of one: a struct whose stored properties are the `{{names}}` of its template. It
/// may hold an answer of the board whole: Mustache reads a nested struct's fields (`{{request.summary}}`) and renders
/// an enum by its case's name, so an answer's enum is rendered as is only where its cases are named as their raw values
/// (`ConsoleViewTests` checks those a template renders).
/// `ConsoleViewTests` renders every view with every field set and fails on a name the template uses that the view
/// does not have, and on a field the template never uses.
protocol ConsoleView: Sendable {
    /// The name of its template: the file `Console/Templates/NAME.mustache`.
    static var template: String { get }
}

/// The console's Mustache templates, `Console/Templates/*.mustache`, compiled into the binary by the `EmbedPlugin`
/// build-tool plug-in: `{{name}}` is escaped for HTML, `{{{name}}}` only ever holds what another template rendered.
/// No template holds a script or a `style` attribute: the Content-Security-Policy forbids inline script and style.
enum ConsoleTemplates {
    /// Every template, by name.
    static let templates: [String: String] = EmbeddedTemplates.all

    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in templates {
            do { try library.register(text, named: name) } catch {
                preconditionFailure("the console template \(name) does not parse: \(error)")
            }
        }
        return library
    }()

    /// The HTML of `view`, by its template.
    static func render<View: ConsoleView>(_ view: View) -> String {
        library.render(view, withTemplate: View.template) ?? ""
    }
}
