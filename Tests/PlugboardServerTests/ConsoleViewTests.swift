import Foundation
import PlugboardFlags
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

/// Every template of the console against the view it renders, every field set: a `{{name}}` the view does not have,
/// or a field no template uses, fails (a misspelled name renders as nothing, silently, otherwise).
@Suite("the console's views and templates", .timeLimit(.hangGuard))
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

    /// The navigation names every page that takes no parameter, the Overview first.
    @Test func theNavigationNamesEveryPageWithoutAParameter() {
        #expect(
            ConsolePages.sections.map(\.href) == [
                "/ui/", "/ui/plugins", "/ui/fleet", "/ui/advisories", "/ui/flags", "/ui/audit", "/ui/webhooks", "/ui/tokens",
                "/ui/rollouts", "/ui/changes",
            ])
        #expect(ConsolePages.sections.map(\.label).contains("Webhooks") && ConsolePages.sections.map(\.label).contains("Advisories"))
    }

    /// Mustache renders an enum by its case's name: the states the templates render are named as their raw values.
    @Test func theStatesTemplatesRenderAreNamedAsTheirRawValues() {
        #expect(APIToken.State.allCases.allSatisfy { String(describing: $0) == $0.rawValue })
        #expect(LoadReportEntry.State.allCases.allSatisfy { String(describing: $0) == $0.rawValue })
        #expect(Rollout.State.allCases.allSatisfy { String(describing: $0) == $0.rawValue })
        #expect(render(TokensPage(admin: true, controls: false, access: [], sdk: [])).contains("SDK and host tokens"))
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
        // An answer held whole: only the fields a template reads count, a nil one of those is refused, and so is a
        // misspelled one; transforms are looked through.
        var answer = ConsoleTemplateCheck()
        let kill = KillSwitch(
            id: 1, scope: "all", pluginID: nil, version: nil, reason: "r", killedAt: "t", killedBy: "alice", revivedAt: nil, revivedBy: nil,
            reviveReason: nil)
        answer.check(
            template: "t",
            "{{count(kills)}}{{^empty(kills)}}{{#kills}}{{kill.reason}}{{kill.revivedAt}}{{kill.reson}}{{/kills}}{{/empty(kills)}}",
            with: Kills(kills: [KillRow(kill: kill)]))
        #expect(answer.problems.count == 2, "\(answer.problems)")
        #expect(answer.problems.contains { $0.contains("has no field reson") }, "\(answer.problems)")
        #expect(answer.problems.contains { $0.contains("KillSwitch leaves revivedAt nil") }, "\(answer.problems)")
        #expect(answer.unused().isEmpty)
    }

    private struct Kills {
        let kills: [KillRow]
    }

    private struct KillRow {
        let kill: KillSwitch
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
        AuditRecord(
            seq: 1, at: "2026-11-29T00:00:00Z", by: "alice", onBehalfOf: "bob", action: "plugin.kill", outcome: "refused",
            targetType: "plugin", targetID: "a", environment: "default", reason: hostile, beforeJSON: "{}", afterJSON: hostile,
            prevHash: "p",
            hash: "h", stateChanges: nil, stateRoot: nil, via: "console from 127.0.0.1"))

    static let request = ChangeRequest(
        id: 7, operation: "plugin.enable", body: "{}", digest: "d", environment: "production", summary: hostile, author: "bob",
        state: "open", required: 2, signed: true, authorApplies: false, scheduledAt: "2026-12-01T00:00:00Z",
        openedAt: "2026-11-29T00:00:00Z",
        closedAt: "2026-11-30T00:00:00Z", closedBy: "carol", closeReason: "done", result: "done", emergency: true,
        acknowledgedAt: "2026-11-30T00:00:00Z", acknowledgedBy: "dan",
        approvals: [
            ChangeApproval(
                principal: "carol", approvedAt: "2026-11-29T00:00:00Z", comment: "ok", digest: "d", base: "b", current: true, keyID: "k1")
        ],
        rows: [
            ChangeRow(
                action: "plugin.enable", targetType: "plugin", targetID: "a", environment: "production", before: "{}", after: "{}")
        ])

    static let waiting = WaitingSection.Row(request: request, needs: "needs 1 approval", approvedBy: "carol", note: "a note")

    static let controls = ControlsView(forms: ["<form></form>"], notes: ["a note"])

    static let card = ChangeCardView(
        heading: "h1", sub: "h2", link: true, request: request, pending: true, counted: "1 of 2", met: true,
        rows: [
            ChangeCardView.Row(
                change: request.rows[0], fields: [ChangeCardView.Field(name: "enabled", before: "false", after: "true")],
                same: "pinned_version none")
        ], controls: controls)

    static let switcher = EnvironmentSwitcher(
        env: "default", action: "/ui/plugins/a", choices: [FormOption(value: "default", label: "default", selected: true)])

    static let report = HostLoadStatus(
        hostID: hostile, environment: "default", hostVersion: "1.0.0", source: "the board file", pluginID: "a", version: "1.0.0",
        state: .skipped, reasonCode: "killed", reason: "r", warning: "w", signature: .valid, reportedAt: "t", crashes: nil)

    static let kill = KillSwitch(
        id: 1, scope: "plugin", pluginID: "a", version: "1.0.0", reason: hostile, killedAt: "t", killedBy: "alice", revivedAt: "t",
        revivedBy: "bob", reviveReason: "r")

    static let environment = EnvironmentState(environment: "default", enabled: true, pinnedVersion: "1.0.0", activeVersion: "1.0.0")

    static let version = PluginVersionInfo(
        version: "1.0.0", name: "A", description: nil, hostRange: nil, gate: nil, entry: nil, capabilities: [], dependencies: [:],
        artifactSHA256: nil, registeredAt: "t", registeredBy: "alice", yankedAt: "t", yankedBy: "alice", yankReason: "y", killed: true,
        manifest: "{}",
        signature: try! JSONDecoder().decode(
            SignatureVerdict.self, from: Data(#"{"state":"unsigned","keyIDs":[],"message":"unsigned"}"#.utf8)))

    static let flag = FlagDetail(
        name: hostile, type: "release", description: "d", owner: "alice", impressionData: false, dependencies: [], createdAt: "t",
        createdBy: "alice", updatedAt: "t", archivedAt: "t", potentiallyStale: false,
        environments: [
            FlagEnvironmentDefinition(
                environment: "default", enabled: true, strategies: [], variants: [FeatureVariant(name: "blue", weight: 1000)])
        ],
        usage: [FlagUsageSummary(environment: "default", lastSeen: "t", yes: 1, no: 2, variants: [:])])

    static let rollout = RolloutStatus(
        rollout: Rollout(
            pluginID: "a", environment: "default", version: "1.1.0", previous: "1.0.0", steps: [10, 100], step: 0, state: .running),
        everySeconds: 60, maxFailureRate: 5, minHosts: 3, stepStartedAt: "t", nextStepAt: "t", startedAt: "t", startedBy: "alice",
        endedAt: nil, endedBy: nil, endReason: nil, history: [], current: figures, previous: nil, hostsByVersion: [:])

    static let figures = RolloutFigures(version: "1.1.0", hosts: 1, activated: 1, failed: 0, crashed: 0, quarantined: 0, failing: 0)

    static let examples: [any ConsoleView] = [
        LayoutView(
            title: hostile,
            session: LayoutSession(
                nav: [NavItem(href: "/ui/", label: "Overview", current: true)], principal: "alice", readOnly: true, csrf: "c"),
            flash: FlashView(text: "done", failed: true), body: "<h1>Body</h1>", live: true),
        refusal,
        SignInView(csrf: "c", error: hostile, provider: hostile),
        form,
        OverviewPage(
            waiting: "<section></section>", verification: VerificationView(ok: true, sentence: "The audit log verifies."),
            kills: [OverviewPage.Kill(kill: kill, target: "plugin a", pluginHref: "/ui/plugins/a")], hostsUp: 1, hostsStale: 1,
            freshMinutes: 10, environments: [LinkedRow(item: "default", href: "/ui/plugins?env=default")], changes: [auditRow],
            failingWebhooks: [
                WebhookEndpoint(
                    name: "ops", url: hostile, events: "*", environment: nil, format: .slack, enabled: true, cursor: 7, attempts: 9,
                    nextAttemptAt: "t", failingSince: "t", failing: true, lastStatus: 500, lastError: hostile, createdAt: "t",
                    createdBy: "alice")
            ]),
        WaitingSection(
            approvable: [waiting], mine: [waiting], emergencies: [waiting], readOnly: true,
            more: "1 more open request on the Changes page."),
        PluginsPage(
            switcher: switcher, query: hostile, next: "/ui/plugins?after=a",
            plugins: [
                LinkedRow(
                    item: PluginSummary(
                        id: "a", name: hostile, environment: "default", enabled: true, killed: true, pinnedVersion: "1.0.0",
                        latestVersion: "1.1.0", activeVersion: "1.0.0", versionCount: 2),
                    href: "/ui/plugins/a?env=default")
            ]),
        PluginPage(
            detail: PluginDetail(
                id: "a", name: hostile, description: "d", createdAt: "t", createdBy: "alice", versions: [version],
                environments: [environment],
                owners: [], killSwitches: [kill]),
            switcher: switcher, state: environment, kill: kill, controls: controls,
            hosts: [LinkedRow(item: report, href: "/ui/fleet?host=h")], versions: [PluginPage.Version(info: version, killed: true)],
            environments: [LinkedRow(item: environment, href: "/ui/plugins/a?env=default")], killSwitches: [kill]),
        FleetPage(
            query: ["plugin": "a", "version": hostile], filtered: true, hostCount: "1 host", next: "/ui/fleet?after=h",
            hosts: [FleetPage.Host([report], now: Date())]),
        FlagsPage(
            switcher: switcher, unused: true,
            flags: [
                LinkedRow(
                    item: FlagSummary(
                        name: hostile, type: "boolean", description: "d", owner: "alice", environment: "default", enabled: true,
                        strategyCount: 1, variantCount: 1, archived: true, potentiallyStale: true, createdAt: "t", updatedAt: "t"),
                    href: "/ui/flags/x")
            ]),
        FlagPage(
            detail: flag, switcher: switcher, enabled: true, controls: controls,
            environments: [FlagPage.Environment(definition: flag.environments[0], strategies: ["default"])]),
        AuditPage(
            verification: VerificationView(ok: true, sentence: "v"),
            query: ["actor": hostile, "target": "t", "action": "plugin.kill", "since": "s"], records: [auditRow]),
        TokensPage(
            admin: true, controls: true,
            access: [
                TokensPage.AccessRow(
                    token: AccessToken(
                        principal: "alice", name: hostile, prefix: "pba_x", readOnly: true, scope: .all, createdAt: "t", createdBy: "alice",
                        expiresAt: "t",
                        revokedAt: nil, revokedBy: nil, revokeReason: nil, lastUsedAt: "t", state: .active),
                    revoke: "<form></form>")
            ],
            sdk: [
                TokensPage.SDKRow(
                    token: APIToken(
                        name: "n", environment: "default", kind: .sdkAndHosts, prefix: "pbc_x", createdAt: "t", createdBy: "alice",
                        expiresAt: nil, revokedAt: nil, revokedBy: nil, revokeReason: nil, lastUsedAt: "t", state: .active),
                    kind: "sdk+hosts")
            ]),
        WebhooksPage(
            admin: true,
            endpoints: [
                WebhooksPage.Endpoint(
                    endpoint: WebhookEndpoint(
                        name: hostile, url: hostile, events: hostile, environment: "production", format: .standard, enabled: false,
                        cursor: 3, attempts: 2, nextAttemptAt: "t", failingSince: "t", failing: false, lastStatus: 410,
                        lastError: hostile, createdAt: "t", createdBy: hostile),
                    environment: "production", state: "disabled", controls: controls)
            ]),
        AdvisoriesPage(
            advisories: [
                AdvisoriesPage.Advisory(
                    id: hostile, anchor: "a", severity: "high", summary: hostile, state: "standing", aliases: [hostile],
                    affects: [AdvisoriesPage.Affect(pluginID: hostile, href: "/ui/plugins/a", ranges: hostile, versions: "1.1.0")],
                    actions: [AdvisoriesPage.Action(environment: hostile, action: "refuse-new", source: "its severity")],
                    hosts: [hostile])
            ],
            exposures: [
                AdvisoriesPage.Exposure(
                    environment: hostile, pluginID: hostile, href: "/ui/plugins/a", hosts: hostile, fix: hostile, command: hostile)
            ], more: hostile),
        RolloutsPage(
            switcher: switcher,
            rollouts: [
                RolloutsPage.Rollout(
                    status: rollout, anchor: "a", href: "/ui/plugins/a", percent: 10, stepList: "10%, 100%",
                    figures: [RolloutsPage.Figures(figures: figures, rate: "0%")],
                    history: [RolloutsPage.Step(step: RolloutStepRecord(percent: 10, reachedAt: "t", by: "alice"), summary: "1 host")],
                    controls: controls)
            ]),
        ChangesPage(
            heading: "Change requests", listHeading: "Open and scheduled", cards: ["<article></article>"], next: "/ui/changes?after=1",
            empty: "No change request waits.", states: [FormOption(value: "", label: "open and scheduled", selected: true)],
            recent: [request], emergencies: ["<article></article>"],
            policies: [
                ChangesPage.Policy(
                    policy: ApprovalPolicy(
                        environment: "production", approvals: 2, signedApprovals: "require", updatedAt: nil, updatedBy: nil),
                    one: true, signed: true)
            ]),
        card,
    ]
}
