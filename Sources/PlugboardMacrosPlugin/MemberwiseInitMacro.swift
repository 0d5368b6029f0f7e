import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@MemberwiseInit(.public)`: the initializer Swift synthesizes for a struct, at the access level given, so that
/// another module may make the value. One parameter a stored property, in the order declared, labelled with its name:
/// a `let` with a value is left out, a `var` with a value defaults to it, an optional `var` defaults to nil, and
/// `@InitDefault(value)` gives any property a default.
struct MemberwiseInitMacro: MemberMacro {
    static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard declaration.is(StructDeclSyntax.self) else {
            throw MacroError("@MemberwiseInit applies to a struct")
        }
        let access = accessLevel(of: node)
        var parameters: [String] = []
        var assignments: [String] = []
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), !isStatic(variable) else { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            let explicitDefault = initDefault(of: variable)
            for binding in variable.bindings {
                guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription else { continue }
                if let accessors = binding.accessorBlock, !isObserverBlock(accessors) { continue }
                if isLet, binding.initializer != nil { continue }
                guard let type = binding.typeAnnotation?.type.trimmed else {
                    throw MacroError("@MemberwiseInit needs the type of \(name) written out")
                }
                var parameter = "\(name): \(type)"
                if let explicitDefault {
                    parameter += " = \(explicitDefault)"
                } else if !isLet, let value = binding.initializer?.value.trimmedDescription {
                    parameter += " = \(value)"
                } else if !isLet, isOptional(type) {
                    parameter += " = nil"
                }
                parameters.append(parameter)
                assignments.append("self.\(name) = \(name)")
            }
        }
        let decl: DeclSyntax = """
            /// A value with each stored property given.
            \(raw: access)init(\(raw: parameters.joined(separator: ", "))) {
            \(raw: assignments.joined(separator: "\n"))
            }
            """
        return [decl]
    }

    /// `public `, `package ` or nothing, from the macro's one argument (`.public`, `.package`, `.internal`).
    static func accessLevel(of node: AttributeSyntax) -> String {
        guard case .argumentList(let arguments) = node.arguments, let first = arguments.first,
            let member = first.expression.as(MemberAccessExprSyntax.self)
        else { return "" }
        switch member.declName.baseName.text {
        case "public", "`public`": return "public "
        case "package", "`package`": return "package "
        default: return ""
        }
    }

    static func isStatic(_ variable: VariableDeclSyntax) -> Bool {
        variable.modifiers.contains { [.keyword(.static), .keyword(.class), .keyword(.lazy)].contains($0.name.tokenKind) }
    }

    /// `willSet` and `didSet` keep a property stored; any other accessor computes it.
    static func isObserverBlock(_ block: AccessorBlockSyntax) -> Bool {
        guard case .accessors(let accessors) = block.accessors else { return false }
        return accessors.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
    }

    static func isOptional(_ type: TypeSyntax) -> Bool {
        type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self)
            || type.as(IdentifierTypeSyntax.self)?.name.text == "Optional"
    }

    /// The value of the property's `@InitDefault(value)`, if it has one.
    static func initDefault(of variable: VariableDeclSyntax) -> String? {
        for attribute in variable.attributes {
            guard let attribute = attribute.as(AttributeSyntax.self),
                attribute.attributeName.trimmedDescription == "InitDefault",
                case .argumentList(let arguments) = attribute.arguments, let value = arguments.first
            else { continue }
            return value.expression.trimmedDescription
        }
        return nil
    }
}

/// `@InitDefault(value)` marks a property's default in the initializer `@MemberwiseInit` writes; it adds nothing itself.
struct InitDefaultMacro: PeerMacro {
    static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}

struct MacroError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

@main
struct PlugboardMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [MemberwiseInitMacro.self, InitDefaultMacro.self]
}
