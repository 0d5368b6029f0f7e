/// The frame of every page: its title, the navigation and who is signed in, the flash of the last change, the body.
struct LayoutView: ConsoleView {
    static let template = "layout"

    /// The page's title, before ` · Plugboard`.
    let title: String
    /// Who is signed in; nil on the sign-in page and the refusals of a request without a session.
    let session: LayoutSession?
    /// The sentence of the change the person made last, shown once.
    let flash: FlashView?
    /// The page's HTML, rendered by its own template.
    let body: String
    /// Whether the page follows the board live (`data-live`, read by the console's script).
    let live: Bool
}

/// The header of a signed-in page: the navigation, the person, the sign-out form.
struct LayoutSession: Sendable {
    let nav: [NavItem]
    /// The person's principal.
    let principal: String
    let readOnly: Bool
    /// The session's CSRF token, for the sign-out form.
    let csrf: String
}

/// One section of the navigation.
struct NavItem: Sendable {
    let href: String
    let label: String
    /// Whether the page shown belongs to it (`aria-current`).
    let current: Bool
}

/// The sentence a change left for the next page.
struct FlashView: Sendable {
    let text: String
    let failed: Bool
}

/// A page that says why a request was refused.
struct RefusalView: ConsoleView {
    static let template = "refusal"
    let heading: String
    let sentence: String
    /// Where its Back link leads.
    let back: String
}

/// The sign-in page.
struct SignInView: ConsoleView {
    static let template = "signin"
    /// The CSRF token of the sign-in form's pre-session.
    let csrf: String
    /// Why the last sign-in was refused.
    let error: String?
    /// The identity provider's name, when the console signs in with one (`Sign in with Okta`).
    let provider: String?
}
