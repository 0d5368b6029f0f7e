import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import PlugboardVersioning
import Testing

/// Rollouts as operations: their wire, their fields' rules and refusals, and the plan a start makes.
@Suite("operations: rollouts", .timeLimit(.hangGuard))
struct RolloutOperationTests {
    static let id = try! PluginID(validating: "com.example.alpha")

    static func start(maxFailureRate: String? = "2.5", minHosts: Int? = 3) throws -> RolloutOperations.Start {
        RolloutOperations.Start(
            id: id, version: try SemanticVersion(validating: "1.1.0"), env: "production",
            steps: try RolloutSteps(validating: "1,10,50,100"), every: try StepInterval(validating: "10m"),
            maxFailureRate: try maxFailureRate.map { text throws(BoardError) in try FailureRate(validating: text) }, minHosts: minHosts,
            reason: try Reason(validating: "CHG-12"))
    }

    /// The body on the wire, or the server's refusal of it.
    static func refusal<Op: ParsedOperation>(_ type: Op.Type, _ json: String) -> String? {
        do {
            _ = try Op.fromWire(Data(json.utf8))
            return nil
        } catch { return error.code == .invalidInput ? error.message : "wrong code: \(error)" }
    }

    @Test func everyRolloutOperationRoundTripsThroughTheWire() throws {
        let reason = try Reason(validating: "a look at the graphs")
        let operations: [any ParsedOperation] = [
            try Self.start(), try Self.start(maxFailureRate: nil, minHosts: nil),
            RolloutOperations.Status(id: Self.id, env: nil), RolloutOperations.Status(id: Self.id, env: "staging"),
            RolloutOperations.Pause(id: Self.id, env: "default", reason: reason),
            RolloutOperations.Resume(id: Self.id, env: "default", reason: nil),
            RolloutOperations.Abort(id: Self.id, env: "production", reason: reason), RolloutOperations.Tick(),
        ]
        for operation in operations { try roundTrip(operation) }
    }

    func roundTrip<Op: ParsedOperation>(_ operation: Op) throws {
        let body = try operation.wireBody()
        let decoded = try Op.fromWire(body)
        #expect(try decoded.wireBody() == body, "\(Op.name): \(String(decoding: body, as: UTF8.self))")
        #expect(decoded.env == operation.env, "\(Op.name)")
    }

    @Test func theWireCarriesTheFieldsByTheirNames() throws {
        func json(_ operation: some ParsedOperation) throws -> String { String(decoding: try operation.wireBody(), as: UTF8.self) }
        #expect(
            try json(Self.start())
                == #"{"env":"production","every":"10m","id":"com.example.alpha","max_failure_rate":"2.5","min_hosts":3,"reason":"CHG-12","steps":"1,10,50,100","version":"1.1.0"}"#
        )
        #expect(try json(RolloutOperations.Status(id: Self.id, env: nil)) == #"{"id":"com.example.alpha"}"#)
        #expect(
            try json(RolloutOperations.Pause(id: Self.id, env: "default", reason: nil)) == #"{"env":"default","id":"com.example.alpha"}"#)
        #expect(try json(RolloutOperations.Tick()) == "{}")
        #expect(
            RolloutOperations.all.map { $0.name } == [
                "rollout.start", "rollout.status", "rollout.pause", "rollout.resume", "rollout.step", "rollout.abort", "rollout.tick",
            ])
        #expect(RolloutOperations.all.filter { $0.access == .stop }.map { $0.name } == ["rollout.abort"])
    }

    @Test func aStartMakesThePlanItsFieldsSay() throws {
        let plan = try Self.start().plan(in: "production")
        #expect(plan.pluginID == "com.example.alpha" && plan.version == "1.1.0" && plan.environment == "production")
        #expect(plan.steps == [1, 10, 50, 100] && plan.everySeconds == 600 && plan.maxFailureBasisPoints == 250 && plan.minHosts == 3)
        let defaults = try Self.start(maxFailureRate: nil, minHosts: nil).plan(in: "default")
        #expect(
            defaults.maxFailureBasisPoints == RolloutPlan.defaultMaxFailureBasisPoints && defaults.minHosts == RolloutPlan.defaultMinHosts)
    }

    @Test func theFieldsReadAndWriteTheirValues() throws {
        #expect(try RolloutSteps(validating: "1, 10,100").percents == [1, 10, 100])
        #expect(try StepInterval(validating: "90s").seconds == 90 && StepInterval(validating: "2d").description == "2d")
        #expect(try StepInterval(validating: "120s").description == "2m" && StepInterval(validating: "365d").seconds == 31_536_000)
        for (text, basisPoints, written) in [
            ("5", 500, "5"), ("2.5", 250, "2.5"), ("0.25", 25, "0.25"), ("0.05", 5, "0.05"), ("100", 10_000, "100"),
        ] {
            let rate = try FailureRate(validating: text)
            #expect(rate.basisPoints == basisPoints && rate.description == written, "\(text)")
        }
    }

    @Test func theFieldsRefuseWithOneSentence() {
        func message(_ make: () throws(BoardError) -> Any) -> String? {
            do {
                _ = try make()
                return nil
            } catch { return error.message }
        }
        #expect(
            message { () throws(BoardError) in try RolloutSteps(validating: "1,x") }
                == "--steps '1,x' is not a list of percentages: use for example 1,10,50,100")
        #expect(
            message { () throws(BoardError) in try StepInterval(validating: "366d") }
                == "--every '366d' is not a duration from 1 second to 365 days: use for example 30s, 10m, 1h or 1d")
        for text in ["2.555", "101", "-1", "1e2", "5%", ""] {
            #expect(
                message { () throws(BoardError) in try FailureRate(validating: text) }
                    == "--max-failure-rate '\(text)' is not a percentage from 0 to 100 (for example 5 or 2.5)", "\(text)")
        }
    }

    @Test func theServerRefusesWhatTheCLIRefuses() {
        let start = #""id":"com.example.alpha","version":"1.1.0","env":"default","every":"10m""#
        #expect(
            Self.refusal(RolloutOperations.Start.self, "{\(start),\"steps\":\"10,5\"}")
                == "--steps must be 1 to 20 increasing percentages from 1 to 100 that end with 100 (for example 1,10,50,100)")
        #expect(Self.refusal(RolloutOperations.Start.self, "{\(start),\"steps\":\"1,x\"}")?.contains("--steps '1,x' is not a list") == true)
        #expect(
            Self.refusal(RolloutOperations.Start.self, "{\(start),\"steps\":\"100\",\"min_hosts\":0}")
                == "--min-hosts must be from 1 to 1000000")
        #expect(Self.refusal(RolloutOperations.Start.self, "{\(start),\"steps\":\"100\",\"min_hosts\":\"3\"}") != nil)
        #expect(Self.refusal(RolloutOperations.Start.self, "{\(start),\"steps\":\"100\"}") == nil)
        #expect(
            Self.refusal(RolloutOperations.Pause.self, #"{"id":"com.example.alpha","paused":true}"#)?.hasPrefix(
                "rollout.pause takes no field 'paused'") == true)
        #expect(Self.refusal(RolloutOperations.Abort.self, #"{"id":"BAD"}"#)?.contains("plug-in id 'BAD' is not valid") == true)
        #expect(Self.refusal(RolloutOperations.Tick.self, #"{"env":"default"}"#)?.hasPrefix("rollout.tick takes no field 'env'") == true)
    }

    @Test func anOperationThatActsInAnEnvironmentRefusesARequestThatNamesNone() throws {
        let abort = try RolloutOperations.Abort.fromWire(Data(#"{"id":"com.example.alpha"}"#.utf8))
        #expect(throws: BoardError.self) { try abort.environment() }
    }

    @Test func tickAndStatusSayWhenThereIsNothing() {
        #expect(RolloutOperations.Tick.text([]) == "Nothing to do: no rollout failed its guard or was due for its next step.")
        #expect(
            RolloutOperations.Status(id: Self.id, env: "staging").text(for: [])
                == "com.example.alpha has no rollout in staging; start one with plugboard rollout start.")
        #expect(
            RolloutOperations.Status(id: Self.id, env: nil).text(for: [])
                == "com.example.alpha has no rollout; start one with plugboard rollout start.")
    }
}
