import ArgumentParser
import Foundation
import PlugboardFlags
import PlugboardModel
import PlugboardOperations
import PlugboardStore

struct FlagCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flag", abstract: "Create, roll out, import, export and evaluate feature flags (Unleash-compatible).",
        subcommands: commands(FlagOperations.commands) + [Import.self, Export.self, Evaluate.self])

    /// `flag import FILE`: the operation, with the document read from a file or stdin here.
    struct Import: RemoteCommand {
        static let configuration = declared(FlagOperations.Import.self)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The features JSON file, or - for stdin.") var file: String
        @OptionGroup var change: WideningFlags

        func execute(_ output: Output) throws(BoardError) {
            let data = try BoundedInput.read(path: file, limit: BoundedInput.featuresLimit, what: "features")
            guard let text = String(data: data, encoding: .utf8) else {
                throw BoardError(.invalidInput, "the features file \(file) is not UTF-8 text")
            }
            let request = FlagOperations.Import(env: try global.environment(), features: text, file: file)
            if let result = try global.performOrRequest(request, change: change, output) { output.report(result) }
        }
    }

    /// `flag export`: the operation, printed as Unleash's own JSON with or without `--json`.
    struct Export: RemoteCommand {
        static let configuration = declared(FlagOperations.Export.self)
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let set = try global.perform(FlagOperations.Export(env: try global.environment()))
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
                let set = try global.perform(FlagOperations.Export(env: try global.environment()))
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
