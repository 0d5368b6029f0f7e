import Foundation
import PlugboardHost
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import PlugboardVersioning
import Testing

/// Rule 1 under a rollout: each host selects releases up to the rollout's cap for it, decided from its own id.
@Suite("resolver: rollouts", .timeLimit(.hangGuard))
struct RolloutResolverTests {
    static let id = "com.example.r"

    /// A host id in the cohort of a 25% step of `id`'s rollout, and one outside it (by their buckets).
    static let inside = hostIDs.first { RolloutCohort.bucket(hostID: $0, pluginID: id) < 2500 }!
    static let outside = hostIDs.first { RolloutCohort.bucket(hostID: $0, pluginID: id) >= 2500 }!
    static let hostIDs = (0..<100).map { "host-\($0)" }

    /// A board with releases 0.9.0, 1.0.0, 1.1.0 and 1.2.0 of `id`.
    func board() throws -> TestBoard {
        let t = try TestBoard()
        for version in ["0.9.0", "1.0.0", "1.1.0", "1.2.0"] { try t.register(Self.id, version) }
        return t
    }

    static func rollout(
        _ state: Rollout.State, version: String = "1.1.0", previous: String? = "1.0.0", step: Int = 0
    ) -> Rollout {
        Rollout(pluginID: id, environment: "default", version: version, previous: previous, steps: [25, 50, 100], step: step, state: state)
    }

    /// The decision for `id` on the host `hostID` when the snapshot carries `rollout`.
    func decision(_ t: TestBoard, _ rollout: Rollout?, hostID: String) throws -> LoadDecision? {
        var snapshot = try t.board.registrySnapshot(environment: "default")
        let plugin = try #require(snapshot.plugins[Self.id])
        snapshot.plugins[Self.id] = RegistrySnapshot.Plugin(
            id: plugin.id, enabled: plugin.enabled, pinnedVersion: plugin.pinnedVersion, killed: plugin.killed,
            killReason: plugin.killReason, versions: plugin.versions, rollout: rollout)
        return try Resolver(hostVersion: SemanticVersion("2.1.0"), hostID: hostID, gate: { _ in true }, availability: { _, _ in nil })
            .resolve(snapshot).decision(for: Self.id)
    }

    @Test func theCohortRunsTheRolledOutReleaseTheOthersThePreviousOneAndALaterReleaseWaits() throws {
        let t = try board()
        #expect(RolloutCohort.bucket(hostID: Self.inside, pluginID: Self.id) < 2500)
        #expect(RolloutCohort.bucket(hostID: Self.outside, pluginID: Self.id) >= 2500)
        for state in [Rollout.State.running, .paused] {
            #expect(try decision(t, Self.rollout(state), hostID: Self.inside)?.version == "1.1.0", "\(state)")
            #expect(try decision(t, Self.rollout(state), hostID: Self.outside)?.version == "1.0.0", "\(state)")
            #expect(try decision(t, Self.rollout(state), hostID: Self.outside)?.skip == nil)
        }
        // The last step holds every host.
        #expect(try decision(t, Self.rollout(.running, step: 2), hostID: Self.outside)?.version == "1.1.0")
        // Without a rollout the highest release loads.
        #expect(try decision(t, nil, hostID: Self.inside)?.version == "1.2.0")
    }

    @Test func anAbortedRolloutPutsEveryHostOnThePreviousReleaseAndACompletedOneEveryHostOnItsOwn() throws {
        let t = try board()
        for host in [Self.inside, Self.outside] {
            #expect(try decision(t, Self.rollout(.aborted, step: 2), hostID: host)?.version == "1.0.0")
            #expect(try decision(t, Self.rollout(.completed, step: 2), hostID: host)?.version == "1.1.0", "1.2.0 waits for a rollout")
        }
        // The previous release killed: the host falls back to the release before it, still under the cap.
        _ = try t.board.kill(.version(Self.id, SemanticVersion("1.0.0")), reason: "bad build", by: TestBoard.admin)
        #expect(try decision(t, Self.rollout(.aborted), hostID: Self.inside)?.version == "0.9.0")
    }

    @Test func aPinnedVersionIgnoresTheRollout() throws {
        let t = try board()
        _ = try t.board.pin(Self.id, version: SemanticVersion("1.2.0"), environment: "default", by: TestBoard.admin)
        for rollout in [Self.rollout(.aborted), Self.rollout(.running, previous: nil)] {
            let decision = try decision(t, rollout, hostID: Self.outside)
            #expect(decision?.version == "1.2.0" && decision?.skip == nil)
        }
    }

    @Test func withoutAPreviousReleaseAHostTheRolloutDoesNotReachRunsNone() throws {
        let t = try board()
        let waiting = try decision(t, Self.rollout(.paused, previous: nil), hostID: Self.outside)
        #expect(waiting?.skip?.code == .rollout && waiting?.version == nil)
        #expect(
            waiting?.skip?.message
                == "the rollout of com.example.r@1.1.0 has not reached this host (step 25%, paused), and no release before it is live")
        #expect(try decision(t, Self.rollout(.running, previous: nil), hostID: Self.inside)?.version == "1.1.0")
        let aborted = try decision(t, Self.rollout(.aborted, previous: nil), hostID: Self.inside)
        #expect(aborted?.skip?.code == .rollout)
        #expect(aborted?.skip?.message == "the rollout of com.example.r@1.1.0 was aborted and no release before it is live")
        #expect(SkipReason.Code.rollout.rawValue == "rollout")
    }

    @Test func aReleaseBetweenThePreviousAndTheRolledOutOneIsNeverSelected() throws {
        let t = try board()
        // 1.1.0 was registered but never rolled out: a rollout of 1.2.0 from 1.0.0 gives the cohort 1.2.0 and everyone
        // else 1.0.0, and when 1.2.0 is killed the cohort falls back to 1.0.0, not to the unguarded 1.1.0.
        let rollout = Self.rollout(.running, version: "1.2.0", previous: "1.0.0")
        #expect(try decision(t, rollout, hostID: Self.inside)?.version == "1.2.0")
        #expect(try decision(t, rollout, hostID: Self.outside)?.version == "1.0.0")
        _ = try t.board.kill(.version(Self.id, SemanticVersion("1.2.0")), reason: "bad", by: TestBoard.admin)
        #expect(try decision(t, rollout, hostID: Self.inside)?.version == "1.0.0")
        #expect(try decision(t, Self.rollout(.completed, version: "1.2.0", previous: "1.0.0"), hostID: Self.outside)?.version == "1.0.0")
    }
}
