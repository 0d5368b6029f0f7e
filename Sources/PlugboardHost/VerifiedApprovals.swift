import PlugboardModel
import Synchronization

/// The approval signatures a host verified, and whether each verified: a host resolves at every change of the board,
/// and the same enablements' signatures need verifying only once. Bounded: emptied when it holds 20,000.
final class VerifiedApprovals: Sendable {
    private let known = Mutex<[String: Bool]>([:])

    /// ``ApprovalStatement/verifies(_:publicKey:statement:)``, remembered.
    func verifies(_ signature: String, _ publicKey: String, _ statement: String) -> Bool {
        let key = "\(publicKey) \(statement) \(signature)"
        if let verdict = known.withLock({ $0[key] }) { return verdict }
        let verdict = ApprovalStatement.verifies(signature, publicKey: publicKey, statement: statement)
        known.withLock {
            if $0.count >= 20_000 { $0.removeAll() }
            $0[key] = verdict
        }
        return verdict
    }
}
