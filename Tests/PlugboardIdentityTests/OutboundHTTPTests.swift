import Foundation
import PlugboardIdentity
import PlugboardNetwork
import PlugboardTestSupport
import Synchronization
import Testing

@Suite("Calls to the provider: bounded, https, public addresses", .timeLimit(.hangGuard))
struct OutboundHTTPTests {
    @Test("an oversize body, a slow answer, a redirect and a non-JSON answer are refused")
    func bounds() async throws {
        try await Harness.with { h in
            let configuration = Harness.configuration(issuer: h.fake.issuer)
            h.fake.state.withLock { $0.discovery = .oversize }
            await expectRefused(.providerUnreachable, "sent more than 256 KiB, which Plugboard refuses to read") {
                _ = try await OIDCProvider.discover(configuration, http: Harness.patient)
            }
            h.fake.state.withLock { $0.discovery = .slow(.seconds(150)) }
            let impatient = OutboundHTTP(requestTimeout: .milliseconds(300), allowLoopback: true)
            let began = ContinuousClock.now
            await expectRefused(.providerUnreachable, "did not answer in time") {
                _ = try await OIDCProvider.discover(configuration, http: impatient)
            }
            #expect(ContinuousClock.now - began < .seconds(120), "the 300 ms limit did not end the wait")
            h.fake.state.withLock { $0.discovery = .redirect }
            await expectRefused(.providerUnreachable, "answered with a redirect (302), which Plugboard does not follow") {
                _ = try await OIDCProvider.discover(configuration, http: Harness.patient)
            }
            h.fake.state.withLock { $0.discovery = .html }
            await expectRefused(.providerUnreachable, "answered 200 with 'text/html', not JSON") {
                _ = try await OIDCProvider.discover(configuration, http: Harness.patient)
            }
        }
    }

    @Test("an http issuer off loopback, and hosts on private or metadata addresses, are refused before any connection")
    func addresses() async throws {
        await expectRefused(.invalidConfiguration, "plain http is allowed only on a loopback address") {
            _ = try await OIDCProvider.discover(Harness.configuration(issuer: "http://idp.example"))
        }
        await expectRefused(.privateAddress, "resolves to 10.1.2.3 (a private address)") {
            _ = try await OIDCProvider.discover(Harness.configuration(issuer: "https://10.1.2.3"))
        }
        await expectRefused(.privateAddress, "resolves to 169.254.169.254 (a link-local address)") {
            _ = try await OIDCProvider.discover(Harness.configuration(issuer: "https://169.254.169.254/latest"))
        }
        var onPremises = Harness.configuration(issuer: "https://169.254.169.254")
        onPremises.allowPrivateNetwork = true
        await expectRefused(.privateAddress, "(a link-local address), which Plugboard does not call") {
            _ = try await OIDCProvider.discover(onPremises)
        }
        await expectRefused(.privateAddress, "resolves to 0.0.0.0 (a reserved address)") {
            _ = try await OIDCProvider.discover(Harness.configuration(issuer: "https://0.0.0.0"))
        }
        await expectRefused(.privateAddress, "resolves to fd00:ec2::254 (an IPv6 unique local address)") {
            _ = try await OIDCProvider.discover(Harness.configuration(issuer: "https://[fd00:ec2::254]"))
        }
    }

    @Test("an endpoint the discovery document puts on a private address is refused, even for a loopback issuer")
    func privateEndpoint() async throws {
        try await Harness.with { h in
            h.fake.state.withLock { $0.discovery = .jwksAt("https://10.0.0.7/jwks") }
            await expectRefused(
                .privateAddress, "resolves to 10.0.0.7 (a private address), which Plugboard does not call unless private networks"
            ) {
                _ = try await OIDCProvider.discover(Harness.configuration(issuer: h.fake.issuer), http: Harness.patient)
            }
        }
    }

    @Test(
        "the address classifier",
        arguments: [
            ("8.8.8.8", AddressScope.global), ("127.0.0.1", .loopback), ("127.255.0.9", .loopback), ("10.0.0.1", .privateNetwork),
            ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork), ("172.32.0.1", .global), ("192.168.1.1", .privateNetwork),
            ("169.254.169.254", .linkLocal), ("100.64.0.1", .sharedAddressSpace), ("100.128.0.1", .global), ("0.0.0.0", .reserved),
            ("224.0.0.1", .reserved), ("255.255.255.255", .reserved), ("192.0.2.10", .reserved), ("::1", .loopback), ("::", .reserved),
            ("fe80::1", .linkLocal), ("febf::1", .linkLocal), ("fc00::1", .uniqueLocal), ("fd12:3456::1", .uniqueLocal),
            ("ff02::1", .reserved), ("2001:db8::1", .reserved), ("2606:4700::1111", .global), ("::ffff:127.0.0.1", .loopback),
            ("::ffff:169.254.169.254", .linkLocal), ("::ffff:8.8.8.8", .global), ("64:ff9b::a00:1", .privateNetwork),
            ("2002:a9fe:a9fe::1", .linkLocal), ("fd00:ec2::254", .uniqueLocal),
        ])
    func classifier(address: String, scope: AddressScope) throws {
        let parsed = try #require(NetworkAddress(address))
        #expect(parsed.scope == scope, "\(address)")
    }

    @Test("text that is not an address is not parsed as one")
    func notAddresses() {
        for text in ["idp.example", "127.0.0.1.example", "[::1]", "1.2.3", "fe80::1%eth0x", ""] {
            #expect(NetworkAddress(text) == nil, "\(text)")
        }
    }
}
