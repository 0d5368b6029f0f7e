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

struct PluginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin", abstract: "Register, enable, kill, yank and pin plug-ins.",
        subcommands: [Register.self, Sign.self, AddSignature.self, List.self, Show.self] + commands(PluginRequests.lifecycle) + [
            Status.self
        ])

    struct Register: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "register", abstract: "Add a plug-in (if new) and a version from its manifest; several manifests in one change.",
            discussion: """
                Use - to read the manifest from stdin. With --artifact the file is copied into the board's artifact store \
                and its SHA-256 recorded. Each --signature (from plugboard plugin sign) must cover exactly this release; it \
                is stored in the same transaction. Several manifests, or folders of them (every *.json inside, in name \
                order), are registered in one transaction: all of them, or none if any one is refused.
                """
        )
        /// The most manifests one command registers.
        static let manifestCountLimit = 100_000

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The manifest JSON files, or folders of them.") var manifests: [String]
        @Option(name: .long, help: ArgumentHelp("The plug-in's artifact (a shared library) to store with this version.", valueName: "file"))
        var artifact: String?
        @Option(name: .long, help: ArgumentHelp("A signature file of this release (repeatable).", valueName: "sig"))
        var signature: [String] = []

        func validate() throws {
            if manifests.isEmpty { throw ValidationError("give at least one manifest") }
            if (artifact != nil || !signature.isEmpty) && manifests.count > 1 {
                throw ValidationError("--artifact and --signature register one manifest; give one manifest with them")
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            let paths = try Self.expand(manifests)
            let single = paths.count == 1 && manifests.count == 1 && paths[0] == manifests[0]
            if !single, artifact != nil || !signature.isEmpty {
                throw BoardError(.invalidInput, "--artifact and --signature register one manifest, and \(manifests[0]) is a folder")
            }
            let texts = try paths.map { path throws(BoardError) in
                PluginRequests.Register.Manifest(file: path, text: try Self.text(path, limit: BoundedInput.manifestLimit, what: "manifest"))
            }
            let signatures = try signature.map { path throws(BoardError) in
                PluginRequests.Register.Manifest(
                    file: path, text: try Self.text(path, limit: ReleaseSignature.maximumSize, what: "signature"))
            }
            var request = PluginRequests.Register(
                manifests: texts, single: single, artifactSHA256: nil, signatures: signatures, localArtifact: artifact)
            if let artifact, let client = try global.adminClient() {
                // The artifact goes first, streamed; the registration then names it by its digest.
                request.localArtifact = nil
                request.artifactSHA256 = try client.upload(artifact)
            }
            output.report(try global.perform(request))
        }

        /// A file's text, bounded; a file that is not UTF-8 is refused.
        static func text(_ path: String, limit: Int, what: String) throws(BoardError) -> String {
            let data = try BoundedInput.read(path: path, limit: limit, what: what)
            guard let text = String(data: data, encoding: .utf8) else {
                throw BoardError(.invalidInput, "the \(what) \(path) is not UTF-8 text")
            }
            return text
        }

        /// The manifest files named: files as given, folders replaced by their `*.json` files in name order.
        static func expand(_ arguments: [String]) throws(BoardError) -> [String] {
            var paths: [String] = []
            for argument in arguments {
                var isFolder: ObjCBool = false
                if argument != "-", FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder), isFolder.boolValue {
                    guard let names = try? FileManager.default.contentsOfDirectory(atPath: argument) else {
                        throw BoardError(.invalidInput, "the folder \(argument) cannot be read")
                    }
                    let found = names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted()
                    if found.isEmpty {
                        throw BoardError(.invalidInput, "the folder \(argument) holds no *.json manifest; nothing was registered")
                    }
                    paths += found.map { (argument as NSString).appendingPathComponent($0) }
                } else {
                    paths.append(argument)
                }
                if paths.count > manifestCountLimit {
                    throw BoardError(
                        .invalidInput, "more than \(manifestCountLimit) manifests were given; register them in several commands")
                }
            }
            if paths.filter({ $0 == "-" }).count > 1 { throw BoardError(.invalidInput, "stdin (-) can hold one manifest only") }
            return paths
        }
    }

    struct List: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List plug-ins and their state in the environment.")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let plugins = try global.perform(PluginRequests.List(env: try global.environment()))
            if output.json {
                output.printJSON(plugins)
                return
            }
            var table = Table("ID", "NAME", "ENABLED", "KILLED", "PINNED", "ACTIVE", "LATEST", "VERSIONS")
            for plugin in plugins {
                // ACTIVE is what a host of the environment may run: nothing while the plug-in is killed or disabled
                // (the JSON keeps the board's `active_version`, the version it would pick).
                let active = plugin.killed || !plugin.enabled ? nil : plugin.activeVersion
                table.add(
                    plugin.id, plugin.name, plugin.enabled.yesNo, plugin.killed.yesNo, plugin.pinnedVersion.cell,
                    active.cell, plugin.latestVersion.cell, String(plugin.versionCount))
            }
            table.print(empty: "No plug-ins are registered; add one with plugboard plugin register MANIFEST.json.")
        }
    }

    struct Show: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a plug-in: versions, environments, owners, kill switches.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                try Validate.pluginID(id)
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            let detail = try global.perform(PluginRequests.Show(id: id))
            if output.json {
                output.printJSON(detail)
                return
            }
            print("\(detail.id)  \(Validate.escaped(detail.name))")
            if let description = detail.description { print(multiline(description)) }
            print("registered \(detail.createdAt) by \(Validate.escaped(detail.createdBy))")
            print("\nVersions:")
            var versions = Table("VERSION", "HOST", "DEPENDENCIES", "GATE", "ARTIFACT", "SIGNATURE", "REGISTERED", "STATE")
            for version in detail.versions {
                var state: [String] = []
                if version.killed { state.append("killed") }
                if let reason = version.yankReason { state.append("yanked: \(reason)") }
                versions.add(
                    version.version, version.hostRange.cell,
                    version.dependencies.isEmpty
                        ? "-" : version.dependencies.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
                    version.gate.cell, version.artifactSHA256.map { String($0.prefix(12)) }.cell, version.signature.cell,
                    "\(version.registeredAt) by \(version.registeredBy)", state.isEmpty ? "ok" : state.joined(separator: "; "))
            }
            print(versions.render())
            print("\nEnvironments:")
            var environments = Table("ENVIRONMENT", "ENABLED", "PINNED", "ACTIVE")
            for env in detail.environments {
                environments.add(env.environment, env.enabled.yesNo, env.pinnedVersion.cell, env.activeVersion.cell)
            }
            print(environments.render())
            print("\nOwners:")
            var owners = Table("PRINCIPAL", "ROLE")
            for owner in detail.owners { owners.add(owner.principal, owner.role.rawValue) }
            print(owners.render())
            let active = detail.killSwitches.filter(\.active)
            print("\nActive kill switches:\(active.isEmpty ? " none" : "")")
            if !active.isEmpty {
                var kills = Table("SCOPE", "TARGET", "REASON", "KILLED")
                for kill in active {
                    kills.add(
                        kill.scope,
                        kill.scope == "all" ? "all plug-ins" : [kill.pluginID, kill.version].compactMap { $0 }.joined(separator: "@"),
                        kill.reason, "\(kill.killedAt) by \(kill.killedBy)")
                }
                print(kills.render())
            }
        }
    }

    struct Status: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "What each host loaded or skipped, and why.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Only this plug-in.") var id: String?

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                if let id { try Validate.pluginID(id) }
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            let rows = try global.perform(PluginRequests.Status(id: id))
            if output.json {
                output.printJSON(rows)
                return
            }
            var table = Table("PLUGIN", "HOST", "ENV", "VERSION", "STATE", "SIGNATURE", "WHY", "REPORTED", "READS")
            for row in rows {
                table.add(
                    row.pluginID, row.hostID, row.environment, row.version.cell, row.state.rawValue, row.signature?.rawValue ?? "-",
                    (row.reason ?? row.warning.map { "warning: \($0)" } ?? "-") + Self.crashNote(row), row.reportedAt,
                    row.source ?? "the board file")
            }
            table.print(
                empty: id.map { "No host has reported on \($0) yet." }
                    ?? "No host has reported yet: hosts write a load report when they start and whenever their plug-ins change.")
        }
    }
}

extension PluginCommand.Status {
    /// ` (2 crashes of this release within the host's window)`, when the row does not say so already.
    static func crashNote(_ row: HostLoadStatus) -> String {
        guard let crashes = row.crashes, row.reasonCode != "crashed" else { return "" }
        return " (\(crashes) crash\(crashes == 1 ? "" : "es") of this release within the host's window)"
    }
}

extension SignatureVerdict {
    /// `valid (key 3f1c…)`, `unsigned`, `revoked (key …)`: a table cell.
    var cell: String {
        keyIDs.isEmpty ? state.rawValue : "\(state.rawValue) (key \(keyIDs.joined(separator: ", ")))"
    }
}
