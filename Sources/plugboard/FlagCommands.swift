public import ArgumentParser
import Foundation
import PlugboardAdmin
import PlugboardFlags
import PlugboardModel
import PlugboardStore

struct FlagCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flag", abstract: "Create, roll out, import, export and evaluate feature flags (Unleash-compatible).",
        subcommands: [
            Create.self, List.self, Show.self, Enable.self, Disable.self, Rollout.self, Archive.self, Unarchive.self,
            Import.self, Export.self, Evaluate.self,
        ])

    struct Create: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a flag, off in every environment; you become its owner.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The flag name, for example checkout.new-flow.") var name: String
        @Option(name: .long, help: "release, experiment, operational, kill-switch or permission.") var type: FlagType = .release
        @Option(name: .long, help: "What the flag is for.") var description: String?

        func validate() throws {
            try checkArguments { () throws(BoardError) in try Validate.newFlagName(name) }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(FlagRequests.Create(name: name, type: type.rawValue, description: description)))
        }
    }

    struct List: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List flags and their state in the environment.")
        @OptionGroup var global: GlobalOptions
        @Flag(name: .long, help: "Only flags older than their type's expected lifetime (release/experiment 40 days, operational 7).")
        var stale = false
        @Flag(name: .long, help: "Include archived flags.") var archived = false
        @Option(
            name: .long,
            help: ArgumentHelp("Only flags no client of plugboard serve evaluated in the last DAYS days (at most 30).", valueName: "days"))
        var unused: Int?

        func validate() throws {
            if unused != nil && (stale || archived) { throw ValidationError("--unused cannot be combined with --stale or --archived") }
        }

        func execute(_ output: Output) throws(BoardError) {
            let flags = try global.perform(
                FlagRequests.List(env: try global.environment(), stale: stale, archived: archived, unused: unused))
            if output.json {
                output.printJSON(flags)
                return
            }
            var table = Table("NAME", "TYPE", "ENABLED", "STRATEGIES", "VARIANTS", "STALE", "OWNER", "CREATED")
            for flag in flags {
                table.add(
                    flag.name + (flag.archived ? " (archived)" : ""), flag.type, flag.enabled.yesNo, String(flag.strategyCount),
                    String(flag.variantCount), flag.potentiallyStale ? "potentially" : "no", flag.owner, String(flag.createdAt.prefix(10)))
            }
            table.print(
                empty: unused.map { "Every flag was evaluated by a client in the last \($0) days." }
                    ?? (stale ? "No potentially stale flags." : "No flags yet; create one with plugboard flag create NAME."))
        }
    }

    struct Show: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a flag's definition in every environment.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The flag name.") var name: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in try Validate.flagName(name) }
        }

        func execute(_ output: Output) throws(BoardError) {
            let flag = try global.perform(FlagRequests.Show(name: name))
            if output.json {
                output.printJSON(flag)
                return
            }
            print(
                "\(Validate.escaped(flag.name))  (\(flag.type), owner \(Validate.escaped(flag.owner))\(flag.archivedAt == nil ? "" : ", archived \(flag.archivedAt!)")\(flag.potentiallyStale ? ", potentially stale" : ""))"
            )
            if let description = flag.description { print(multiline(description)) }
            if !flag.dependencies.isEmpty {
                print(
                    "depends on: "
                        + flag.dependencies.map { dependency in
                            Validate.escaped(dependency.feature) + (dependency.enabled == false ? " (off)" : "")
                                + (dependency.variants.map { " variants \(Validate.escaped($0.joined(separator: ",")))" } ?? "")
                        }.joined(separator: ", "))
            }
            var table = Table("ENVIRONMENT", "ENABLED", "STRATEGIES", "VARIANTS")
            for env in flag.environments {
                let strategies = env.strategies.map { strategy -> String in
                    var text = strategy.name
                    if let rollout = strategy.parameters?["rollout"] { text += " \(rollout)%" }
                    if let constraints = strategy.constraints, !constraints.isEmpty {
                        text += " (\(constraints.count) constraint\(constraints.count == 1 ? "" : "s"))"
                    }
                    return text
                }.joined(separator: "; ")
                table.add(
                    env.environment, env.enabled.yesNo, strategies.isEmpty ? (env.enabled ? "(everyone)" : "-") : strategies,
                    env.variants.isEmpty ? "-" : env.variants.map { "\($0.name):\($0.weight)" }.joined(separator: ", "))
            }
            print(table.render())
            Self.printUsage(flag.usage)
        }

        /// Last seen and counts per environment, from what SDKs reported to plugboard serve.
        static func printUsage(_ usage: [FlagUsageSummary]) {
            guard !usage.isEmpty else {
                print("usage: no client of plugboard serve reported evaluating it in the last \(UsageRetention.days) days")
                return
            }
            var table = Table("ENVIRONMENT", "LAST SEEN", "YES", "NO", "VARIANTS")
            for entry in usage {
                table.add(
                    entry.environment, entry.lastSeen.cell, String(entry.yes), String(entry.no),
                    entry.variants.isEmpty
                        ? "-" : entry.variants.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ", "))
            }
            print("usage (last \(UsageRetention.days) days, per hour bucket):")
            print(table.render())
        }
    }

    struct Enable: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "enable", abstract: "Switch a flag on in the environment.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The flag name.") var name: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in try Validate.flagName(name) }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(FlagRequests.SetEnabled(name: name, env: try global.environment(), enabled: true)))
        }
    }

    struct Disable: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "disable", abstract: "Switch a flag off in the environment.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The flag name.") var name: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in try Validate.flagName(name) }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(FlagRequests.SetEnabled(name: name, env: try global.environment(), enabled: false)))
        }
    }

    struct Rollout: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "rollout", abstract: "Roll a flag out to a percentage of users (a flexibleRollout strategy).",
            discussion:
                "Stickiness decides what keeps a user in the same bucket: default (userId, else sessionId, else random), userId, sessionId, random, or any context field."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The flag name.") var name: String
        @Argument(help: "0 to 100.") var percent: Int
        @Option(name: .long, help: "The context field that keeps a user in the same bucket.") var stickiness = "default"

        func validate() throws {
            try checkArguments { () throws(BoardError) in try Validate.flagName(name) }
            // The argument's form: a usage error (exit 2), like a percentage that is not a number.
            guard (0...100).contains(percent) else { throw ValidationError("the rollout percentage \(percent) is not between 0 and 100") }
            do { try Validate.stickiness(stickiness) } catch { throw ValidationError(error.message) }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(
                try global.perform(
                    FlagRequests.Rollout(name: name, env: try global.environment(), percent: percent, stickiness: stickiness)))
        }
    }

    struct Archive: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "archive", abstract: "Archive a flag: no longer evaluated (off) or exported.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The flag name.") var name: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in try Validate.flagName(name) }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(FlagRequests.Archive(name: name, archived: true)))
        }
    }

    struct Unarchive: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "unarchive", abstract: "Bring an archived flag back.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The flag name.") var name: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in try Validate.flagName(name) }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(FlagRequests.Archive(name: name, archived: false)))
        }
    }

    struct Import: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "import", abstract: "Import Unleash client-API features JSON into the environment (admins).",
            discussion:
                "The file is {\"version\":…,\"features\":[…],\"segments\":[…]}. It is validated as a whole; an invalid file changes nothing. Flags not in the file are left alone."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The features JSON file, or - for stdin.") var file: String

        func execute(_ output: Output) throws(BoardError) {
            let data = try BoundedInput.read(path: file, limit: BoundedInput.featuresLimit, what: "features")
            guard let text = String(data: data, encoding: .utf8) else {
                throw BoardError(.invalidInput, "the features file \(file) is not UTF-8 text")
            }
            output.report(try global.perform(FlagRequests.Import(env: try global.environment(), features: text, file: file)))
        }
    }

    struct Export: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "export", abstract: "Print the environment's flags as Unleash client-API features JSON.")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let set = try global.perform(FlagRequests.Export(env: try global.environment()))
            print(String(decoding: set.encoded(prettyPrinted: true), as: UTF8.self))
        }
    }

    struct Evaluate: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "evaluate", abstract: "Evaluate flags for a batch of contexts (JSON Lines in, JSON Lines out).",
            discussion: """
                Each input line is {"toggle": "NAME", "context": {userId, sessionId, remoteAddress, environment, appName, currentTime, properties}}.
                Each output line is {"toggle":…,"enabled":…,"variant":{"name":…,"enabled":…,"feature_enabled":…,"payload":…}}, in input order.
                With --features FILE the file is evaluated exactly as Unleash's engine would (problems are warnings on stderr) and no board is opened; \
                otherwise the board's flags for --env are used.
                The input is streamed: memory stays the same whatever its size, and output is written in blocks as it is made.
                A malformed line stops the command with its line number; the output of the lines before it may have been written.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: ArgumentHelp("Unleash client-API features JSON to evaluate instead of the board.", valueName: "file"))
        var features: String?
        @Option(name: .long, help: ArgumentHelp("The contexts, one JSON object a line, or - for stdin.", valueName: "file.jsonl"))
        var contexts: String
        @Option(name: .long, help: "The host name applicationHostname strategies compare with (default: this machine's).")
        var hostname: String?

        func validate() throws {
            if features == "-" && contexts == "-" {
                throw ValidationError("--features and --contexts cannot both read stdin; give one of them a file")
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            let environment = EvaluationEnvironment(hostname: hostname ?? ProcessInfo.processInfo.hostName)
            let evaluator: BatchEvaluator
            if let features {
                let data = try BoundedInput.read(path: features, limit: BoundedInput.featuresLimit, what: "features")
                do {
                    let set = try FeatureSet.decode(from: data)
                    for problem in set.validate().errors { Output.printWarning("\(problem) (evaluated as Unleash does)") }
                    evaluator = BatchEvaluator(snapshot: try FlagSnapshot(set, mode: .lenient, environment: environment))
                } catch let error where error.code == .malformedFeatures {
                    throw BoardError(.invalidInput, error.message)
                } catch {
                    throw BoardError(.invalidInput, "the features file \(features) cannot be evaluated: \(error)")
                }
            } else {
                // From the board, or with --server its flags as the server exports them: evaluated here either way.
                let set = try global.perform(FlagRequests.Export(env: try global.environment()))
                do { evaluator = BatchEvaluator(snapshot: try FlagSnapshot(set, mode: .strict, environment: environment)) } catch {
                    throw BoardError(.integrity, "the board's flags for this environment do not validate: \(error)")
                }
            }
            // Streamed: one line in memory at a time, the output written in blocks as it fills. A bad line stops the
            // command; what was written before it stays (nothing, for an output under one block).
            var blocks = OutputBlocks(reserving: BoundedInput.contextLineLimit)
            try BoundedInput.forEachLine(path: contexts, limit: BoundedInput.contextLineLimit, what: "contexts") {
                line, lineNumber throws(BoardError) in
                guard !BatchEvaluator.isBlank(line) else { return }
                do throws(FlagsError) { try evaluator.evaluate(line: line, lineNumber: lineNumber, appendingTo: &blocks.text) } catch {
                    throw BoardError(.invalidInput, "--contexts line \(lineNumber): \(error.message)")
                }
                blocks.text.append("\n")
                blocks.flushIfFull()
            }
            blocks.flush()
        }
    }
}

extension FlagType: ExpressibleByArgument {}
