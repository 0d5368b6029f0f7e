import ArgumentParser
import Foundation
import Logging
import PlugboardIdentity
import PlugboardServer

/// `plugboard serve`'s sign-in with an OpenID Connect provider: `--oidc-issuer URL --oidc-client-id ID
/// --oidc-client-secret-file FILE`, for the console (`--admin`).
struct OIDCOptions: ParsableArguments {
    @Option(
        name: .customLong("oidc-issuer"),
        help: ArgumentHelp("Sign people in to the console with this OpenID Connect provider (its issuer URL, https).", valueName: "url"))
    var issuer: String?
    @Option(name: .customLong("oidc-client-id"), help: ArgumentHelp("The console's client id at the provider.", valueName: "id"))
    var clientID: String?
    @Option(
        name: .customLong("oidc-client-secret-file"),
        help: ArgumentHelp("A file (mode 0600) holding the client's secret.", valueName: "file"))
    var clientSecretFile: String?
    @Option(
        name: .customLong("oidc-redirect-url"),
        help: ArgumentHelp(
            "The callback URL registered at the provider (default: the console's address + /ui/oidc/callback).", valueName: "url"))
    var redirectURL: String?
    @Option(
        name: .customLong("oidc-name"),
        help: ArgumentHelp("The provider's name on the sign-in page (default: its host).", valueName: "text"))
    var name: String?
    @Option(
        name: .customLong("oidc-name-claim"),
        help: ArgumentHelp("The claim a new person's principal is named from (else their e-mail).", valueName: "claim"))
    var nameClaim = "preferred_username"
    @Option(
        name: .customLong("oidc-groups-claim"),
        help: ArgumentHelp(
            "The claim that lists the person's groups, for plugboard sso map-group (for example groups).", valueName: "claim"))
    var groupsClaim: String?
    @Option(
        name: .customLong("oidc-scope"),
        help: ArgumentHelp(
            "One more scope to ask for, beside openid, profile and email (for example groups); repeatable.", valueName: "scope"))
    var scopes: [String] = []
    @Option(
        name: .customLong("oidc-step-up"),
        help: ArgumentHelp(
            "Seconds after signing in at the provider before a person must sign in there again to approve, apply or open a widening change (default an hour).",
            valueName: "seconds"))
    var stepUp = 3600
    @Flag(
        name: .customLong("oidc-allow-private-network"),
        help: "Let the provider's addresses be private (a provider inside the organisation's network).")
    var allowPrivateNetwork = false

    /// Whether any of the options is given.
    var given: Bool { issuer != nil || clientID != nil || clientSecretFile != nil }

    func validate() throws {
        guard given else { return }
        guard issuer != nil, clientID != nil, clientSecretFile != nil else {
            throw ValidationError("--oidc-issuer, --oidc-client-id and --oidc-client-secret-file go together; give all three")
        }
        for claim in [nameClaim] + (groupsClaim.map { [$0] } ?? []) where claim.isEmpty || claim.utf8.count > 64 {
            throw ValidationError("a claim's name is 1-64 characters")
        }
        if let name, name.isEmpty || name.utf8.count > 64 { throw ValidationError("--oidc-name is 1-64 characters") }
        for scope in scopes where scope.isEmpty || scope.utf8.count > 64 || scope.contains(where: { $0 == " " || $0.isNewline }) {
            throw ValidationError("--oidc-scope '\(scope)' is not one scope: 1-64 characters without spaces")
        }
        guard (1...86_400).contains(stepUp) else { throw ValidationError("--oidc-step-up \(stepUp) is outside 1-86400 seconds") }
    }

    /// The provider, discovered and checked; nil without `--oidc-issuer`. `console` is the console's own URL.
    func provider(console: String, logger: Logger) async throws(IdentityError) -> ConsoleIdentityProvider? {
        guard let issuer, let clientID, let clientSecretFile else { return nil }
        let configuration = OIDCConfiguration(
            issuer: issuer, clientID: clientID, clientSecret: try ClientSecret(contentsOfFile: clientSecretFile),
            redirectURI: redirectURL ?? console + "/ui/oidc/callback", scopes: ["openid", "profile", "email"] + scopes,
            nameClaim: nameClaim, groupsClaim: groupsClaim,
            allowPrivateNetwork: allowPrivateNetwork)
        let provider = try await OIDCProvider.discover(configuration, logger: logger)
        return ConsoleIdentityProvider(provider: provider, name: name ?? URL(string: issuer)?.host ?? issuer, stepUpAge: .seconds(stepUp))
    }
}
