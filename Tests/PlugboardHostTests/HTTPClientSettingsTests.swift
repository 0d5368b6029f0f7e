import Foundation
import PlugboardClient
import PlugboardModel
import PlugboardTestSupport
import Testing

@Suite("the HTTP clients' one configuration", .timeLimit(.hangGuard))
struct HTTPClientSettingsTests {
    @Test func plugboardTimeoutSetsTheCLIsDeadlineInWholeSecondsFromOneToADay() {
        #expect(HTTPClientSettings.timeout([:]) == .seconds(120))
        #expect(HTTPClientSettings.timeout(["PLUGBOARD_TIMEOUT": "3"]) == .seconds(3))
        for refused in ["0", "-5", "86401", "1.5", "soon", ""] {
            #expect(HTTPClientSettings.timeout(["PLUGBOARD_TIMEOUT": refused]) == .seconds(120), "\(refused)")
        }
    }

    @Test func anEmptyCAFileMeansTheSystemsTrustRoots() {
        #expect(HTTPClientSettings.caFile([:]) == nil)
        #expect(HTTPClientSettings.caFile(["PLUGBOARD_CA_FILE": ""]) == nil)
        #expect(HTTPClientSettings.caFile(["PLUGBOARD_CA_FILE": "/etc/ca.pem"]) == "/etc/ca.pem")
    }

    @Test func aHostWaitsLessThanTheCLIAndRetriesNoRefusedConnection() {
        #expect(HTTPClientSettings.host.connectTimeout < HTTPClientSettings.cli.connectTimeout)
        #expect(HTTPClientSettings.host.deadline == .seconds(20))
        #expect(!HTTPClientSettings.host.retriesConnections)
        #expect(HTTPClientSettings.cli.retriesConnections)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    @Test func oneTableNamesAFailureForTheCLIsSentenceAndAHostsFewWords() {
        let server = "https://board.example.com:4242"
        let refused = Failure(description: "connect(descriptor:addr:size:): Connection refused (errno: 111)")
        #expect(ConnectionFailure(refused) == .refused)
        #expect(HTTPClientSettings.host.words(for: refused) == "connection refused")
        #expect(
            HTTPClientSettings.cli.sentence(for: refused, server: server)
                == "cannot reach the server at \(server): the connection was refused or timed out; is plugboard serve --admin running there?"
        )
        let handshake = Failure(description: "NIOSSLError.handshakeFailed(BoringSSL: CERTIFICATE_VERIFY_FAILED)")
        #expect(HTTPClientSettings.cli.sentence(for: handshake, server: server).contains("the TLS connection failed"))
        let unresolved = Failure(description: "NXDOMAIN")
        #expect(
            HTTPClientSettings.cli.sentence(for: unresolved, server: server)
                == "cannot reach the server at \(server): the name does not resolve")
        #expect(HTTPClientSettings.host.words(for: Failure(description: "connectTimeout")) == "no connection within 1 s")
        #expect(
            HTTPClientSettings.cli.sentence(for: Failure(description: "deadlineExceeded"), server: server).contains("set PLUGBOARD_TIMEOUT")
        )
        let long = Failure(description: String(repeating: "x", count: 300))
        #expect(HTTPClientSettings.host.words(for: long).count == 201)
    }

    @Test func anUnreadableCAFileIsOneSentenceNamingIt() {
        let settings = HTTPClientSettings(
            connectTimeout: .seconds(1), readTimeout: .seconds(1), deadline: .seconds(1), retriesConnections: false,
            caFile: "/nonexistent/ca.pem")
        #expect(throws: BoardError.self) { try settings.makeClient() }
        do {
            _ = try settings.makeClient()
        } catch {
            #expect(error.message == "$PLUGBOARD_CA_FILE (/nonexistent/ca.pem) is not a readable PEM file of certificates")
        }
    }
}
