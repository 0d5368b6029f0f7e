import Foundation
import PlugboardTestSupport
import Testing

/// A receiver of webhooks in a process of its own: `Tools/Scripts/webhook-receiver`, which verifies every delivery with
/// PyPI's `standardwebhooks` (in the venv whose Python `PLUGBOARD_STANDARDWEBHOOKS_PYTHON` names, as `.ci/run` sets it).
struct WebhookReceiver {
    static let python = ProcessInfo.processInfo.environment["PLUGBOARD_STANDARDWEBHOOKS_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tools/Scripts/webhook-receiver").path
    static let skipped =
        "needs PyPI's standardwebhooks: set PLUGBOARD_STANDARDWEBHOOKS_PYTHON to a Python that imports it (.ci/run makes .build/webhooks-venv)"

    /// One line the receiver wrote: a delivery it verified, or a refusal.
    struct Delivery: Decodable {
        let id: String?
        let seq: Int64?
        let action: String?
        let duplicate: Bool?
        let chain: String?
        let status: Int?
        let hash: String?
        let prevHash: String?
        let error: String?
        /// The sender's port: deliveries over one kept connection share it.
        let peer: Int?

        enum CodingKeys: String, CodingKey {
            case id, seq, action, duplicate, chain, status, hash, error, peer
            case prevHash = "prev_hash"
        }
    }

    let child: ChildProcess
    let folder: String
    let port: Int

    /// Starts a receiver with `options` (`--fail 3`, `--status 410`, `--hang`, `--hold 4`), its files in `sandbox`.
    init(_ sandbox: Sandbox, _ name: String, options: [String] = []) async throws {
        let python = try #require(Self.python, Comment(rawValue: Self.skipped))
        folder = sandbox.root.appendingPathComponent("receiver-\(name)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        child = try ChildProcess(
            python,
            [
                Self.script, "--port-file", folder + "/port", "--secret-file", folder + "/secret", "--out", folder + "/out",
                "--held-file", folder + "/held",
            ] + options)
        let portFile = folder + "/port"
        port = try await eventually("the receiver \(name) to listen", poll: .milliseconds(20)) {
            (try? String(contentsOfFile: portFile, encoding: .utf8)).flatMap { Int($0) }
        }
    }

    /// The URL to add: by name (`localhost`), which `webhook add` accepts and delivery checks.
    var url: String { "http://localhost:\(port)/hook" }

    /// Gives the receiver the endpoint's secret.
    func use(secret: String) throws { try secret.write(toFile: folder + "/secret", atomically: true, encoding: .utf8) }

    /// Every line written so far.
    var deliveries: [Delivery] {
        guard let text = try? String(contentsOfFile: folder + "/out", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Delivery.self, from: Data($0.utf8)) }
    }

    /// The seq whose first delivery the receiver holds (`--hold`), once it holds one; with `--hang`, the number of
    /// requests it holds unanswered.
    var held: Int64? { (try? String(contentsOfFile: folder + "/held", encoding: .utf8)).flatMap { Int64($0) } }

    /// Adds the endpoint `name` for this receiver and hands it the secret.
    func add(_ sandbox: Sandbox, _ name: String, _ options: [String] = []) async throws {
        let added = try await sandbox.ok(["webhook", "add", name, url, "--json"] + options).json() as? [String: Any]
        try use(secret: try #require(added?["secret"] as? String))
    }
}
