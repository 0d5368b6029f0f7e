import Foundation
import Testing

@testable import PlugboardServer

/// Every template of the console against the view it renders, every field set: a `{{name}}` the view does not have,
/// or a field no template uses, fails (a misspelled name renders as nothing, silently, otherwise).
@Suite("the console's views and templates", .timeLimit(.minutes(10)))
struct ConsoleViewTests {
    @Test func everyTemplateUsesOnlyFieldsOfItsViewAndEveryFieldIsUsed() throws {
        var check = ConsoleTemplateCheck()
        var covered: Set<String> = []
        for view in Self.examples {
            let name = type(of: view).template
            covered.insert(name)
            let text = try #require(ConsoleTemplates.templates[name], "no template \(name).mustache")
            check.check(template: name, text, with: view)
        }
        #expect(check.problems.isEmpty, "\(check.problems.joined(separator: "\n"))")
        #expect(check.unused().isEmpty, "fields no template uses: \(check.unused().joined(separator: ", "))")
        #expect(covered == Set(ConsoleTemplates.templates.keys), "templates without an example view")
    }

    @Test func everyViewRendersEveryFieldEscaped() {
        for view in Self.examples {
            let html = render(view)
            #expect(!html.isEmpty && !html.contains("{{"), "\(type(of: view).template)")
            #expect(!html.contains("<script>x"), "\(type(of: view).template) leaves a field unescaped")
        }
    }

    @Test func theCheckFindsAMisspelledNameAnUnusedFieldAndAShadowingOptional() throws {
        var check = ConsoleTemplateCheck()
        check.check(template: "refusal", "<h1>{{heading}}</h1>{{#sentense}}{{/sentense}}", with: Self.refusal)
        #expect(check.problems.count == 1 && check.problems[0].contains("{{sentense}}"), "\(check.problems)")
        #expect(check.unused() == ["RefusalView.back", "RefusalView.sentence"])
        // A nil optional of a row would render the page's field of the same name: refused.
        var shadow = ConsoleTemplateCheck()
        shadow.check(template: "t", "{{name}}{{#rows}}{{name}}{{/rows}}", with: Outer(name: "page", rows: [Inner(name: "row")]))
        #expect(shadow.problems.count == 1 && shadow.problems[0].contains("Inner.name is optional"), "\(shadow.problems)")
        #expect(throws: ConsoleTemplateCheck.ParseError.self) { try ConsoleTemplateCheck.parse("{{#a}}{{/b}}") }
    }

    private struct Outer {
        let name: String
        let rows: [Inner]
    }

    private struct Inner {
        let name: String?
    }

    private func render(_ view: some ConsoleView) -> String { ConsoleTemplates.render(view) }

    // MARK: Every view, every field set

    /// A value that must come out escaped.
    static let hostile = "<script>x</script>\"'&"

    static let refusal = RefusalView(heading: "Refused", sentence: hostile, back: "/ui/")

    static let form = FormView(
        operation: "plugin.kill", csrf: "c", returnTo: "/ui/plugins/a", danger: true, button: "Kill",
        fixed: [FormFixedField(name: "id", value: "a")],
        fields: [
            FormInput(
                id: "plugin.kill-version-1", name: "version", label: "Only this version", checkbox: true, choices: true,
                options: [FormOption(value: "1.0.0", label: "1.0.0", selected: true)], text: true, type: "text", required: true,
                placeholder: "–")
        ])

    static let auditRow = AuditRowView(
        seq: 1, at: "2026-11-29T00:00:00Z", by: "alice", via: "console from 127.0.0.1", action: "plugin.kill", refused: true,
        target: "plugin a", reason: hostile, change: true, before: "before: –", after: "after: {}")

    static let waiting = WaitingSection.Row(
        id: 1, summary: "enable a", author: "bob", needs: "needs 1 approval", approvedBy: "carol", scheduled: "2026-12-01T00:00:00Z",
        note: "a note")

    static let card = ChangeCardView(
        heading: "h1", sub: "h2", link: true, id: 7, summary: hostile, author: "bob", state: "open", openedAt: "2026-11-29T00:00:00Z",
        environment: "production", operation: "plugin.enable", body: "{}", digest: "d", pending: true,
        approvals: [ChangeCardView.Approval(principal: "carol", at: "2026-11-29T00:00:00Z", comment: "ok", counts: true, signed: "k1")],
        counted: "1 of 2", met: true, signedRequired: true, scheduledAt: "2026-12-01T00:00:00Z", closed: "applied", result: "done",
        emergency: true, acknowledged: "acknowledged by dan",
        rows: [
            ChangeCardView.Row(
                action: "plugin.enable", target: "plugin a in production",
                fields: [ChangeCardView.Field(name: "enabled", before: "false", after: "true")], same: "pinned_version none",
                created: true, removed: true)
        ], hasRows: true, forms: ["<form></form>"], notes: ["a note"], controls: true)

    static let examples: [any ConsoleView] = [
        LayoutView(
            title: hostile,
            session: LayoutSession(
                nav: [NavItem(href: "/ui/", label: "Overview", current: true)], principal: "alice", readOnly: true, csrf: "c"),
            flash: FlashView(text: "done", failed: true), body: "<h1>Body</h1>", live: true),
        refusal,
        SignInView(csrf: "c", error: hostile),
        form,
        OverviewPage(
            waiting: "<section></section>", verified: true, verification: "The audit log verifies.",
            kills: [OverviewPage.Kill(target: "plugin a", pluginHref: "/ui/plugins/a", reason: hostile, killedAt: "t", killedBy: "alice")],
            hasKills: true, killCount: 1, hostsUp: 1, hostsStale: 1, freshMinutes: 10,
            environments: [EnvironmentLink(name: "default", href: "/ui/plugins?env=default")], changes: [auditRow]),
        WaitingSection(
            approvable: [waiting], hasApprovable: true, mine: [waiting], hasMine: true, emergencies: [waiting], hasEmergencies: true,
            readOnly: true, nothing: true, more: "1 more open request on the Changes page."),
        PluginsPage(
            env: "default", environments: [EnvironmentChoice(name: "default", selected: true)], query: hostile, next: "/ui/plugins?after=a",
            plugins: [
                PluginsPage.Row(
                    id: "a", href: "/ui/plugins/a?env=default", name: hostile, enabled: true, killed: true, activeVersion: "1.0.0",
                    latestVersion: "1.1.0", pinnedVersion: "1.0.0")
            ]),
        PluginPage(
            detail: PluginPage.Detail(id: "a", name: hostile, description: "d"), env: "default", action: "/ui/plugins/a",
            switcher: [EnvironmentChoice(name: "default", selected: true)], enabled: true, pinned: "1.0.0", active: "1.0.0", killed: true,
            killReason: hostile, controls: true, forms: ["<form></form>"],
            hosts: [
                PluginPage.Host(
                    hostID: "h", hostQuery: "h", environment: "default", version: "1.0.0", state: "loaded", reason: "r", reportedAt: "t")
            ],
            versions: [
                PluginPage.Version(
                    version: "1.0.0", registeredAt: "t", registeredBy: "alice", signature: "unsigned", killed: true, yanked: true,
                    yankReason: "y")
            ],
            environments: [
                PluginPage.Environment(environment: "default", enabled: true, href: "/ui/plugins/a?env=default", pinnedVersion: "1")
            ],
            killSwitches: [
                PluginPage.KillSwitchRow(
                    scope: "plugin", version: "1.0.0", reason: "r", killedAt: "t", killedBy: "alice", revivedAt: "t", revivedBy: "bob")
            ]),
        FleetPage(
            plugin: "a", version: "1.0.0", filtered: true, hostCount: "1 host", next: "/ui/fleet?after=h",
            hosts: [
                FleetPage.Host(
                    hostID: hostile, anchor: "h", environment: "default", source: "the board file", reportedAt: "t", hostVersion: "1.0.0",
                    stale: true,
                    entries: [FleetPage.Entry(pluginID: "a", href: "/ui/plugins/a", version: "1.0.0", state: "loaded", reason: "r")])
            ]),
        FlagsPage(
            env: "default", environments: [EnvironmentChoice(name: "default", selected: true)], unused: true,
            flags: [
                FlagsPage.Row(
                    name: hostile, href: "/ui/flags/x", type: "boolean", enabled: true, archived: true, potentiallyStale: true,
                    strategyCount: 1, variantCount: 1, owner: "alice")
            ]),
        FlagPage(
            detail: FlagPage.Detail(
                name: hostile, type: "boolean", description: "d", owner: "alice", createdAt: "t", createdBy: "alice", archivedAt: "t"),
            env: "default", action: "/ui/flags/x", switcher: [EnvironmentChoice(name: "default", selected: true)], enabled: true,
            controls: true, forms: ["<form></form>"],
            environments: [
                FlagPage.Environment(
                    environment: "default", enabled: true, strategies: ["default"], hasVariants: true,
                    variants: [FlagPage.Variant(name: "blue", weight: 1000)])
            ],
            usage: [FlagPage.Usage(environment: "default", yes: 1, no: 2, lastSeen: "t")]),
        AuditPage(
            verified: true, verification: "v", actor: hostile, target: "t", action: "plugin.kill", since: "s", records: [auditRow]),
        TokensPage(
            admin: true, controls: true,
            access: [
                TokensPage.AccessToken(
                    principal: "alice", name: hostile, prefix: "pba_x", readOnly: true, state: "active", expiresAt: "never",
                    lastUsedAt: "t",
                    revoke: "<form></form>")
            ],
            sdk: [
                TokensPage.SDKToken(name: "n", environment: "default", kind: "client", prefix: "pbc_x", state: "active", lastUsedAt: "t")
            ]),
        RolloutsPage(
            env: "default", environments: [EnvironmentChoice(name: "default", selected: true)],
            rollouts: [
                RolloutsPage.Rollout(
                    anchor: "a", pluginID: "a", href: "/ui/plugins/a", from: "1.0.0", version: "1.1.0", state: "running", percent: 10,
                    stepList: "10%, 100%", nextStepAt: "t", maxFailureRate: 5, minHosts: 3,
                    figures: [
                        RolloutsPage.Figures(
                            version: "1.1.0", hosts: 1, activated: 1, failed: 0, crashed: 0, quarantined: 0, rate: "0%")
                    ],
                    history: [RolloutsPage.Step(percent: 10, reachedAt: "t", by: "alice", summary: "1 host")], controls: true,
                    forms: ["<form></form>"])
            ]),
        ChangesPage(
            heading: "Change requests", listHeading: "Open and scheduled", cards: ["<article></article>"], next: "/ui/changes?after=1",
            empty: "No change request waits.", states: [ChangesPage.StateChoice(value: "", label: "open and scheduled", selected: true)],
            recent: [ChangesPage.Closed(id: 1, summary: hostile, author: "bob", state: "applied", closed: "t by carol", reason: "r")],
            hasRecent: true, emergencies: ["<article></article>"], hasEmergencies: true, hasPolicies: true,
            policies: [ChangesPage.Policy(environment: "production", approvals: 2, one: true, signed: true)]),
        card,
    ]
}
