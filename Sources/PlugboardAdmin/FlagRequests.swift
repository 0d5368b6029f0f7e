package import Foundation
package import PlugboardFlags
package import PlugboardModel
package import PlugboardStore

/// Reads and changes of feature flags: the requests behind `plugboard flag …`.
package enum FlagRequests {
    /// `flag create NAME`.
    package struct Create: RoutedRequest {
        package var name: String
        package var type: String
        package var description: String?
        package init(name: String, type: String, description: String?) {
            self.name = name
            self.type = type
            self.description = description
        }
        package static let route = AdminRoute(
            "flag.create", .post, "/flags", .write, summary: "Create a flag, off in every environment; the caller becomes its owner.",
            parameters: [
                AdminParameter("name", .body, required: true, "The flag name."),
                AdminParameter("type", .body, required: true, "release, experiment, operational, kill-switch or permission."),
                AdminParameter("description", .body, "What the flag is for."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.newFlagName(name)
            guard let flagType = FlagType(rawValue: type) else {
                throw BoardError(
                    .invalidInput,
                    "'\(Validate.escaped(type))' is not a flag type; use one of \(FlagType.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            return AdminReply(try board.createFlag(name, type: flagType, description: description, by: actor))
        }
    }

    /// `flag list [--stale] [--archived] [--unused DAYS]`.
    package struct List: RoutedRequest {
        package var env: String
        package var stale: Bool
        package var archived: Bool
        package var unused: Int?
        package init(env: String, stale: Bool, archived: Bool, unused: Int?) {
            self.env = env
            self.stale = stale
            self.archived = archived
            self.unused = unused
        }
        package static let route = AdminRoute(
            "flag.list", .get, "/flags", .read, summary: "List flags and their state in the environment.",
            parameters: [
                .env(.query), AdminParameter("stale", .query, .boolean, required: true, "Only potentially stale flags."),
                AdminParameter("archived", .query, .boolean, required: true, "Include archived flags."),
                AdminParameter("unused", .query, .integer, "Only flags no client evaluated in the last DAYS days (1-30)."),
            ], response: "FlagSummaryList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[FlagSummary]> {
            try Validate.environment(env)
            if let unused {
                guard !stale, !archived else { throw BoardError(.invalidInput, "--unused cannot be combined with --stale or --archived") }
                return AdminReply(try board.unusedFlags(environment: env, days: unused))
            }
            return AdminReply(try board.flagSummaries(environment: env, staleOnly: stale, includeArchived: archived))
        }
    }

    /// `flag show NAME`.
    package struct Show: RoutedRequest {
        package var name: String
        package init(name: String) { self.name = name }
        package static let route = AdminRoute(
            "flag.show", .get, "/flags/{name}", .read, summary: "Show a flag's definition in every environment, and its usage.",
            parameters: [.path("name", "The flag name.")], response: "FlagDetail")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<FlagDetail> {
            try Validate.flagName(name)
            return AdminReply(try board.flagDetail(name))
        }
    }

    /// `flag enable NAME` and `flag disable NAME`.
    package struct SetEnabled: RoutedRequest {
        package var name: String
        package var env: String
        package var enabled: Bool
        package init(name: String, env: String, enabled: Bool) {
            self.name = name
            self.env = env
            self.enabled = enabled
        }
        package static let route = AdminRoute(
            "flag.enable", .put, "/flags/{name}/enabled", .write, summary: "Switch a flag on or off in the environment.",
            parameters: [
                .path("name", "The flag name."), .env(.body),
                AdminParameter("enabled", .body, .boolean, required: true, "True for on, false for off."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.flagName(name)
            try Validate.environment(env)
            return AdminReply(try board.setFlagEnabled(name, enabled, environment: env, by: actor))
        }
    }

    /// `flag rollout NAME PERCENT [--stickiness FIELD]`.
    package struct Rollout: RoutedRequest {
        package var name: String
        package var env: String
        package var percent: Int
        package var stickiness: String
        package init(name: String, env: String, percent: Int, stickiness: String) {
            self.name = name
            self.env = env
            self.percent = percent
            self.stickiness = stickiness
        }
        package static let route = AdminRoute(
            "flag.rollout", .put, "/flags/{name}/rollout", .write,
            summary: "Roll a flag out to a percentage of users (a flexibleRollout strategy).",
            parameters: [
                .path("name", "The flag name."), .env(.body),
                AdminParameter("percent", .body, .integer, required: true, "0 to 100."),
                AdminParameter("stickiness", .body, required: true, "The context field that keeps a user in the same bucket (default)."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.flagName(name)
            try Validate.environment(env)
            guard (0...100).contains(percent) else {
                throw BoardError(.invalidInput, "the rollout percentage \(percent) is not between 0 and 100")
            }
            try Validate.stickiness(stickiness)
            return AdminReply(try board.rolloutFlag(name, percent: percent, stickiness: stickiness, environment: env, by: actor))
        }
    }

    /// `flag archive NAME` and `flag unarchive NAME`.
    package struct Archive: RoutedRequest {
        package var name: String
        package var archived: Bool
        package init(name: String, archived: Bool) {
            self.name = name
            self.archived = archived
        }
        package static let route = AdminRoute(
            "flag.archive", .put, "/flags/{name}/archived", .write, summary: "Archive a flag, or bring an archived flag back.",
            parameters: [
                .path("name", "The flag name."),
                AdminParameter("archived", .body, .boolean, required: true, "True to archive, false to bring it back."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.flagName(name)
            return AdminReply(try board.archiveFlag(name, archived: archived, by: actor))
        }
    }

    /// `flag import FILE`: Unleash client-API features JSON, sent as its text.
    package struct Import: RoutedRequest {
        package var env: String
        /// The features document's text, exactly as read (so that its keys reach the board as written).
        package var features: String
        /// What the file was called, for sentences.
        package var file: String
        package init(env: String, features: String, file: String) {
            self.env = env
            self.features = features
            self.file = file
        }
        package static let route = AdminRoute(
            "flag.import", .post, "/features", .write,
            summary: "Import Unleash client-API features JSON into the environment (admins); an invalid document changes nothing.",
            parameters: [
                .env(.body), AdminParameter("features", .body, required: true, "The features document, as JSON text."),
                AdminParameter("file", .body, required: true, "The name of the file it came from, for messages."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.environment(env)
            let data = Data(features.utf8)
            let set: FeatureSet
            do { set = try FeatureSet.decode(from: data) } catch { throw BoardError(.invalidInput, error.message) }
            if let duplicate = DuplicateKeys.first(in: data) {
                throw BoardError(
                    .invalidInput,
                    "the features file \(file) has the key '\(Validate.escaped(duplicate.key))' twice (in \(Validate.escaped(duplicate.location))), and JSON readers disagree on which one counts; keep one"
                )
            }
            return AdminReply(try board.importFlags(set, environment: env, by: actor))
        }
    }

    /// `flag export`, and what `flag evaluate` evaluates: the environment's flags as Unleash client-API features JSON.
    package struct Export: RoutedRequest {
        package var env: String
        package init(env: String) { self.env = env }
        package static let route = AdminRoute(
            "flag.export", .get, "/features", .read, summary: "The environment's flags as Unleash client-API features JSON.",
            parameters: [.env(.query)], response: "UnleashFeatures")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<FeatureSet> {
            try Validate.environment(env)
            return AdminReply(try board.featureSet(environment: env, requireExisting: true))
        }
        /// Unleash's own JSON, not the CLI's snake_case.
        package static func encodeResponse(_ value: FeatureSet) -> Data { value.encoded(prettyPrinted: false) }
        /// Unleash's features document keeps Unleash's own (camelCase) keys.
        package static var responseJSONSchema: JSONSchema { JSONSchema.of(FeatureSet.self, snakeCase: false) }
        package static func decodeResponse(_ data: Data) throws -> FeatureSet { try FeatureSet.decode(from: data) }
    }
}
