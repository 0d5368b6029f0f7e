import Foundation
import Hummingbird
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

/// The operations API's limits on their own: failures per address and from everyone, large bodies per token and in all,
/// and the free space an upload leaves.
@Suite("the operations API's limits", .timeLimit(.hangGuard))
struct OperationsLimitsTests {
    @Test func failuresAreLimitedPerAddressAndFromEveryone() {
        let failures = FailedAuthentications(limit: 3, globalLimit: 5, window: .seconds(60))
        #expect((0..<3).map { _ in failures.fail("10.0.0.1") } == [nil, nil, nil])
        let wait = failures.fail("10.0.0.1")
        #expect(wait != nil && wait! >= 1 && wait! <= 60)
        // Another address fails as usual until everyone together passes the global limit.
        #expect(failures.fail("10.0.0.2") == nil)
        #expect(failures.fail("10.0.0.3") != nil)
    }

    @Test func largeBodiesAreAdmittedPerPrincipalAndWithinTheBudget() throws {
        let admission = BodyAdmission(perPrincipal: 2, budget: 100)
        let first = try admission.admit(principal: "alice", bytes: 40).get()
        _ = try admission.admit(principal: "alice", bytes: 10).get()
        #expect(admission.admit(principal: "alice", bytes: 1).failure == .principal)
        #expect(admission.admit(principal: "bob", bytes: 51).failure == .server)
        first.leave()
        #expect(admission.admit(principal: "alice", bytes: 40).failure == nil)
        #expect(admission.admit(principal: "bob", bytes: 50).failure == nil)
    }

    @Test func anUploadLeavesTheReservedSpaceFree() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("uploads-\(UUID().uuidString)").path
        var limits = ServerConfiguration.UploadQuota()
        limits.reserve = 1 << 30
        let uploads = StagedUploads(limits: limits, freeSpace: { _ in (1 << 30) + (10 << 20) })
        let refused = uploads.admit(principal: "alice", holdsRole: true, bytes: 11 << 20, folder: folder)
        #expect(refused.failure?.status.code == 507)
        #expect(
            refused.failure?.sentence.contains("would leave less than the 1024 MiB kept free") == true,
            "\(String(describing: refused.failure))")
        let admitted = try uploads.admit(principal: "alice", holdsRole: true, bytes: 9 << 20, folder: folder).get()
        // An upload in progress counts against the free space until it ends.
        #expect(uploads.admit(principal: "bob", holdsRole: true, bytes: 2 << 20, folder: folder).failure?.status.code == 507)
        admitted.cancel()
        #expect(uploads.admit(principal: "bob", holdsRole: true, bytes: 2 << 20, folder: folder).failure == nil)
    }

    @Test func aPrincipalWithoutARoleHasOneUploadWaitingAtATime() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("uploads-\(UUID().uuidString)").path
        let uploads = StagedUploads(limits: ServerConfiguration.UploadQuota(), freeSpace: { _ in 1 << 40 })
        let first = try uploads.admit(principal: "mallory", holdsRole: false, bytes: 100, folder: folder).get()
        let second = uploads.admit(principal: "mallory", holdsRole: false, bytes: 100, folder: folder)
        #expect(second.failure?.status == .tooManyRequests)
        #expect(
            second.failure?.sentence.contains("at most 1 for a principal who holds no role on the board") == true,
            "\(String(describing: second.failure))")
        // Their bytes stay within the quota of every principal.
        first.cancel()
        #expect(
            uploads.admit(principal: "mallory", holdsRole: false, bytes: (2 << 30) + 1, folder: folder).failure?.status == .tooManyRequests)
        // A principal who holds a role has more.
        for _ in 0..<4 { _ = try uploads.admit(principal: "bob", holdsRole: true, bytes: 100, folder: folder).get() }
        #expect(uploads.admit(principal: "bob", holdsRole: true, bytes: 100, folder: folder).failure?.status == .tooManyRequests)
    }
}

extension Result {
    /// The failure, or nil on success.
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
