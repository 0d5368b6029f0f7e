import ArgumentParser
import Foundation
import Logging
import PlugboardIdentity
import PlugboardServer

/// `plugboard serve`'s sign-in with an OpenID Connect provider: `--oidc-issuer URL --oidc-client-id ID
/// --oidc-client-secret-file FILE`, for the console (`--admin`). Each option's name is its property's.
struct OIDCOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("Sign people in to the console with this OpenID Connect provider (its issuer URL, https).", valueName: "url"))
    var oidcIssuer: String?
    @Option(help: ArgumentHelp("The console's client id at the provider.", valueName: "id")) var oidcClientId: String?
    @Option(help: ArgumentHelp("A file (mode 0600) holding the client's secret.", valueName: "file")) var oidcClientSecretFile: String?
    @Option(
        help: ArgumentHelp(
            "The callback URL registered at the provider (default: the console's URL + /ui/oidc/callback).", valueName: "url"))
    var oidcRedirectUrl: String?
    @Option(help: ArgumentHelp("The provider's name on the sign-in page (default: its host).", valueName: "text")) var oidcName: String?
    @Option(help: ArgumentHelp("The claim a new person's principal is named from (else their e-mail).", valueName: "claim"))
    var oidcNameClaim = "preferred_username"
    @Option(
        help: ArgumentHelp(
            "The claim that lists the person's groups, for plugboard sso map-group (for example groups).", valueName: "claim"))
    var oidcGroupsClaim: String?
    @Option(
        help: ArgumentHelp(
            "One more scope to ask for, beside openid, profile and email (for example groups); repeatable.", valueName: "scope"))
    var oidcScope: [String] = []
    @Option(
        help: ArgumentHelp(
            "Seconds after signing in at the provider before a person must sign in there again to approve, apply or open a widening change (default an hour).",
            valueName: "seconds"))
    var oidcStepUp = 3600
    @Flag(help: "Let the provider's addresses be private (a provider inside the organisation's network).") var oidcAllowPrivateNetwork =
        false

    /// Whether any of the options is given.
    var given: Bool { oidcIssuer != nil || oidcClientId != nil || oidcClientSecretFile != nil }

    func validate() throws {
        guard given else { return }
        guard oidcIssuer != nil, oidcClientId != nil, oidcClientSecretFile != nil else {
            throw ValidationError("--oidc-issuer, --oidc-client-id and --oidc-client-secret-file go together; give all three")
        }
        for (option, value) in [
            ("--oidc-name-claim", oidcNameClaim), ("--oidc-groups-claim", oidcGroupsClaim ?? "groups"), ("--oidc-name", oidcName ?? "x"),
        ]
            + oidcScope.map({ ("--oidc-scope", $0) }) where value.isEmpty || value.utf8.count > 64 || value.contains(where: \.isNewline)
        {
            throw ValidationError("\(option) '\(value)' is not 1-64 characters of one line")
        }
        guard (1...86_400).contains(oidcStepUp) else { throw ValidationError("--oidc-step-up \(oidcStepUp) is outside 1-86400 seconds") }
    }

    /// The provider, discovered and checked; nil without `--oidc-issuer`. `console` is the console's own URL.
    func provider(console: String, logger: Logger) async throws(IdentityError) -> ConsoleIdentityProvider? {
        guard let oidcIssuer, let oidcClientId, let oidcClientSecretFile else { return nil }
        let redirect = oidcRedirectUrl ?? console + "/ui/oidc/callback"
        let configuration = OIDCConfiguration(
            issuer: oidcIssuer, clientID: oidcClientId, clientSecret: try ClientSecret(contentsOfFile: oidcClientSecretFile),
            redirectURI: redirect, scopes: ["openid", "profile", "email"] + oidcScope, nameClaim: oidcNameClaim,
            groupsClaim: oidcGroupsClaim, allowPrivateNetwork: oidcAllowPrivateNetwork)
        let provider = try await OIDCProvider.discover(configuration, logger: logger)
        return ConsoleIdentityProvider(
            provider: provider, name: oidcName ?? URL(string: oidcIssuer)?.host ?? oidcIssuer, stepUpAge: .seconds(oidcStepUp))
    }
}
