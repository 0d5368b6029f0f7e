import ArgumentParser
import Foundation
import PlugboardAdmin
import PlugboardModel
import PlugboardStore
import PlugboardVersioning

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Enabling, kill switches, yanks and pins: what decides whether a release runs.
extension PluginCommand {
    struct Enable: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "enable", abstract: "Enable a plug-in in the environment.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                try Validate.pluginID(id)
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(PluginRequests.SetEnabled(id: id, env: try global.environment(), enabled: true)))
        }
    }

    struct Disable: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "disable", abstract: "Disable a plug-in in the environment.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                try Validate.pluginID(id)
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(PluginRequests.SetEnabled(id: id, env: try global.environment(), enabled: false)))
        }
    }

    /// What `kill` and `revive` act on: ID, ID --version V, or --all.
    struct KillTargetOptions: ParsableArguments {
        @Argument(help: "The plug-in id (omit with --all).") var id: String?
        @Option(name: .long, help: "Only this version of the plug-in.") var version: String?
        @Flag(name: .long, help: "Every plug-in on the board (admins only).") var all = false

        func validate() throws {
            if all, id != nil || version != nil { throw ValidationError("--all takes no plug-in id and no --version") }
            if !all, id == nil { throw ValidationError("name a plug-in id, or use --all") }
            try checkArguments { () throws(BoardError) in
                if let id { try Validate.pluginID(id) }
                if let version { _ = try AdminParse.version(version) }
            }
        }

        /// The request that throws (or, with `revive`, lifts) this kill switch.
        func request(reason: String?, revive: Bool) -> PluginRequests.Kill {
            PluginRequests.Kill(id: all ? nil : id, version: version, all: all, reason: reason, revive: revive)
        }
    }

    struct Kill: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "kill", abstract: "Throw a kill switch over a plug-in, one of its versions, or all plug-ins.",
            discussion: "A kill switch covers every environment; running hosts deactivate what it covers at their next poll.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: KillTargetOptions
        @Option(name: .long, help: "Why (kept in the board and the audit log).") var reason: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                try Validate.reason(reason)
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(target.request(reason: reason, revive: false)))
        }
    }

    struct Revive: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "revive", abstract: "Lift the kill switch over a plug-in, a version, or all plug-ins.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: KillTargetOptions
        @Option(name: .long, help: "Why.") var reason: String?

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                if let reason { try Validate.reason(reason) }
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(target.request(reason: reason, revive: true)))
        }
    }

    struct Yank: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "yank", abstract: "Yank a version so hosts no longer pick it (a pin still wins).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Argument(help: "The version to yank.") var version: String
        @Option(name: .long, help: "Why.") var reason: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                try Validate.pluginID(id)
                _ = try AdminParse.version(version)
                try Validate.reason(reason)
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(PluginRequests.Yank(id: id, version: version, reason: reason, undo: false)))
        }
    }

    struct Unyank: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "unyank", abstract: "Undo a yank.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Argument(help: "The version.") var version: String
        @Option(name: .long, help: "Why.") var reason: String?

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                try Validate.pluginID(id)
                _ = try AdminParse.version(version)
                if let reason { try Validate.reason(reason) }
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(PluginRequests.Yank(id: id, version: version, reason: reason, undo: true)))
        }
    }

    struct Pin: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "pin", abstract: "Pin a plug-in to one version in the environment.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Argument(help: "The version.") var version: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                try Validate.pluginID(id)
                _ = try AdminParse.version(version)
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(PluginRequests.Pin(id: id, env: try global.environment(), version: version)))
        }
    }

    struct Unpin: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "unpin", abstract: "Remove the version pin in the environment.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                try Validate.pluginID(id)
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(PluginRequests.Pin(id: id, env: try global.environment(), version: nil)))
        }
    }
}
