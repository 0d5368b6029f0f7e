import Mustache

/// The console's pages as Mustache templates, compiled into the binary: `{{name}}` is escaped for HTML, `{{{body}}}`
/// only ever holds what another template rendered. No template holds a script or a `style` attribute: the
/// Content-Security-Policy forbids inline script and style.
enum ConsoleTemplates {
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in templates {
            do { try library.register(text, named: name) } catch {
                preconditionFailure("the console template \(name) does not parse: \(error)")
            }
        }
        return library
    }()

    /// Renders `name` with `context`.
    static func render(_ name: String, _ context: [String: Any]) -> String {
        library.render(context, withTemplate: name) ?? ""
    }

    static let templates: [String: String] = [
        "layout": layout, "signin": signIn, "form": form, "overview": overview, "plugins": plugins, "plugin": plugin,
        "fleet": fleet, "flags": flags, "flag": flag, "audit": audit, "tokens": tokens, "rollouts": rollouts, "refusal": refusal,
        "changes": changes, "changeRequest": changeRequest, "waiting": waiting,
    ]

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Plugboard</title>
        <link rel="stylesheet" href="/ui/static/console.css">
        <script src="/ui/static/console.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#main">Skip to the content</a>
        <header class="top">
        <p class="brand"><a href="/ui/">Plugboard</a></p>
        {{#signedIn}}
        <nav aria-label="Console">
        <ul>
        {{#nav}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a></li>{{/nav}}
        </ul>
        </nav>
        <div class="who">
        <span>{{principal}}{{#readOnly}} (read-only){{/readOnly}}</span>
        <form method="post" action="/ui/sign-out"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Sign out</button></form>
        </div>
        {{/signedIn}}
        </header>
        <main id="main" data-live="{{live}}">
        {{#flash}}<p class="flash{{#failed}} failed{{/failed}}" role="status">{{text}}</p>{{/flash}}
        {{{body}}}
        </main>
        </body>
        </html>
        """

    static let signIn = """
        <h1>Sign in</h1>
        <p>Sign in with a personal access token: <code>plugboard access-token create --name console</code> prints one
        (it starts with <code>pba_</code>). You act with exactly that token's rights, and every change you make is in the
        audit log under your name.</p>
        {{#error}}<p class="flash failed" role="alert">{{error}}</p>{{/error}}
        <form method="post" action="/ui/sign-in" class="stack">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="token">Access token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required>
        <button type="submit">Sign in</button>
        </form>
        """

    /// A form of one operation, from its declaration: the fields the page does not fix, labelled by their help.
    static let form = """
        <form method="post" action="/ui/do/{{operation}}" class="op{{#danger}} danger{{/danger}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="return" value="{{returnTo}}">
        {{#fixed}}<input type="hidden" name="{{name}}" value="{{value}}">{{/fixed}}
        {{#fields}}
        {{#checkbox}}<label class="check"><input type="checkbox" id="{{id}}" name="{{name}}" value="true"> {{label}}</label>{{/checkbox}}
        {{#choices}}<label for="{{id}}">{{label}}</label><select id="{{id}}" name="{{name}}">{{#options}}<option>{{.}}</option>{{/options}}</select>{{/choices}}
        {{#text}}<label for="{{id}}">{{label}}</label><input id="{{id}}" name="{{name}}" type="{{type}}"{{#required}} required{{/required}}{{#placeholder}} placeholder="{{placeholder}}"{{/placeholder}}>{{/text}}
        {{/fields}}
        <button type="submit" data-operation="{{operation}}">{{button}}</button>
        </form>
        """

    static let overview = """
        <h1>Overview</h1>
        {{{waiting}}}
        <section aria-labelledby="verify-h">
        <h2 id="verify-h">Audit log</h2>
        <p class="{{#verified}}ok{{/verified}}{{^verified}}bad{{/verified}}">{{verification}}</p>
        </section>
        <section aria-labelledby="kills-h">
        <h2 id="kills-h">Active kill switches ({{killCount}})</h2>
        {{#hasKills}}
        <div class="scroll"><table>
        <thead><tr><th scope="col">Target</th><th scope="col">Reason</th><th scope="col">Thrown</th><th scope="col">By</th></tr></thead>
        <tbody>{{#kills}}<tr><td>{{#pluginHref}}<a href="{{pluginHref}}">{{target}}</a>{{/pluginHref}}{{^pluginHref}}{{target}}{{/pluginHref}}</td><td>{{reason}}</td><td>{{killedAt}}</td><td>{{killedBy}}</td></tr>{{/kills}}</tbody>
        </table></div>
        {{/hasKills}}
        {{^kills}}<p>No kill switch is active.</p>{{/kills}}
        </section>
        <section aria-labelledby="hosts-h">
        <h2 id="hosts-h">Hosts</h2>
        <p><strong>{{hostsUp}}</strong> reported in the last {{freshMinutes}} minutes, <strong>{{hostsStale}}</strong> stale. <a href="/ui/fleet">The fleet</a></p>
        </section>
        <section aria-labelledby="envs-h">
        <h2 id="envs-h">Environments</h2>
        <ul class="inline">{{#environments}}<li><a href="/ui/plugins?env={{.}}">{{.}}</a></li>{{/environments}}</ul>
        </section>
        <section aria-labelledby="changes-h">
        <h2 id="changes-h">Last changes</h2>
        <div class="scroll"><table>
        <thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Reason</th></tr></thead>
        <tbody>{{#changes}}<tr><td>{{seq}}</td><td>{{at}}</td><td>{{by}}{{#via}}<br><small>via {{via}}</small>{{/via}}</td><td>{{action}}{{#refused}} (refused){{/refused}}</td><td>{{target}}</td><td>{{reason}}</td></tr>{{/changes}}</tbody>
        </table></div>
        <p><a href="/ui/audit">The whole audit log</a></p>
        </section>
        """

    static let plugins = """
        <h1>Plug-ins in {{env}}</h1>
        <form method="get" action="/ui/plugins" class="filters">
        <label for="env">Environment</label>
        <select id="env" name="env">{{#environments}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/environments}}</select>
        <label for="q">Search</label>
        <input id="q" name="q" type="search" value="{{query}}" placeholder="id or name">
        <button type="submit">Show</button>
        </form>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Plug-in</th><th scope="col">Name</th><th scope="col">State</th><th scope="col">Running</th><th scope="col">Latest</th><th scope="col">Pinned</th></tr></thead>
        <tbody>{{#plugins}}<tr><td><a href="{{href}}">{{id}}</a></td><td>{{name}}</td><td>{{#killed}}<strong class="bad">killed</strong>{{/killed}}{{^killed}}{{#enabled}}enabled{{/enabled}}{{^enabled}}disabled{{/enabled}}{{/killed}}</td><td>{{activeVersion}}</td><td>{{latestVersion}}</td><td>{{pinnedVersion}}</td></tr>{{/plugins}}</tbody>
        </table></div>
        {{^plugins}}<p>No plug-in {{#query}}matches “{{query}}”{{/query}}{{^query}}is registered{{/query}}.</p>{{/plugins}}
        {{#next}}<p><a href="{{next}}" rel="next">Next page</a></p>{{/next}}
        """

    static let plugin = """
        <h1>{{detail.name}} <span class="id">{{detail.id}}</span></h1>
        {{#detail.description}}<p>{{detail.description}}</p>{{/detail.description}}
        <section aria-labelledby="state-h">
        <h2 id="state-h">In {{env}}</h2>
        <p>{{#killed}}<strong class="bad">Killed</strong>: {{killReason}}. {{/killed}}{{#enabled}}Enabled{{/enabled}}{{^enabled}}Disabled{{/enabled}}{{#pinned}}, pinned to {{pinned}}{{/pinned}}{{#active}}; hosts run {{active}}{{/active}}.</p>
        {{#controls}}<div class="controls">{{#forms}}{{{.}}}{{/forms}}</div>{{/controls}}
        </section>
        <section aria-labelledby="hosts-h">
        <h2 id="hosts-h">Hosts</h2>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Host</th><th scope="col">Environment</th><th scope="col">Version</th><th scope="col">State</th><th scope="col">Why</th><th scope="col">Reported</th></tr></thead>
        <tbody>{{#hosts}}<tr><td><a href="/ui/fleet?host={{hostQuery}}">{{hostID}}</a></td><td>{{environment}}</td><td>{{version}}</td><td class="state-{{state}}">{{state}}</td><td>{{reason}}</td><td>{{reportedAt}}</td></tr>{{/hosts}}</tbody>
        </table></div>
        {{^hosts}}<p>No host has reported this plug-in.</p>{{/hosts}}
        </section>
        <section aria-labelledby="versions-h">
        <h2 id="versions-h">Versions</h2>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Version</th><th scope="col">Registered</th><th scope="col">Signature</th><th scope="col">State</th></tr></thead>
        <tbody>{{#versions}}<tr><td>{{version}}</td><td>{{registeredAt}} by {{registeredBy}}</td><td>{{signature}}</td><td>{{#killed}}<strong class="bad">killed</strong> {{/killed}}{{#yanked}}yanked: {{yankReason}}{{/yanked}}</td></tr>{{/versions}}</tbody>
        </table></div>
        </section>
        <section aria-labelledby="envs-h">
        <h2 id="envs-h">Environments</h2>
        <ul>{{#environments}}<li><a href="{{href}}">{{environment}}</a>: {{#enabled}}enabled{{/enabled}}{{^enabled}}disabled{{/enabled}}{{#pinnedVersion}}, pinned to {{pinnedVersion}}{{/pinnedVersion}}</li>{{/environments}}</ul>
        </section>
        <section aria-labelledby="kill-h">
        <h2 id="kill-h">Kill switches</h2>
        <ul>{{#killSwitches}}<li>{{scope}} {{version}}: {{reason}} ({{killedAt}}, {{killedBy}}){{#revivedAt}}, revived {{revivedAt}} by {{revivedBy}}{{/revivedAt}}</li>{{/killSwitches}}</ul>
        {{^killSwitches}}<p>None ever.</p>{{/killSwitches}}
        </section>
        """

    static let fleet = """
        <h1>Fleet</h1>
        <form method="get" action="/ui/fleet" class="filters">
        <label for="plugin">Plug-in</label><input id="plugin" name="plugin" value="{{plugin}}">
        <label for="version">Version</label><input id="version" name="version" value="{{version}}">
        <button type="submit">Filter</button>
        </form>
        <p>{{hostCount}}{{#filtered}} with this plug-in{{/filtered}}.</p>
        {{#hosts}}
        <section class="host" aria-labelledby="host-{{anchor}}">
        <h2 id="host-{{anchor}}">{{hostID}} <span class="id">{{environment}}</span>{{#stale}} <span class="bad">stale</span>{{/stale}}</h2>
        <p>Reads {{source}}; last report {{reportedAt}}; host version {{hostVersion}}.</p>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Plug-in</th><th scope="col">Version</th><th scope="col">State</th><th scope="col">Why</th></tr></thead>
        <tbody>{{#entries}}<tr><td><a href="{{href}}">{{pluginID}}</a></td><td>{{version}}</td><td class="state-{{state}}">{{state}}</td><td>{{reason}}</td></tr>{{/entries}}</tbody>
        </table></div>
        </section>
        {{/hosts}}
        {{^hosts}}<p>No host has reported{{#filtered}} this plug-in{{/filtered}}.</p>{{/hosts}}
        {{#next}}<p><a href="{{next}}" rel="next">Next hosts</a></p>{{/next}}
        """

    static let flags = """
        <h1>Flags in {{env}}</h1>
        <form method="get" action="/ui/flags" class="filters">
        <label for="env">Environment</label>
        <select id="env" name="env">{{#environments}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/environments}}</select>
        <label class="check"><input type="checkbox" name="unused" value="30"{{#unused}} checked{{/unused}}> Only flags unused for 30 days</label>
        <button type="submit">Show</button>
        </form>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Flag</th><th scope="col">Type</th><th scope="col">State</th><th scope="col">Strategies</th><th scope="col">Variants</th><th scope="col">Owner</th></tr></thead>
        <tbody>{{#flags}}<tr><td><a href="{{href}}">{{name}}</a></td><td>{{type}}</td><td>{{#enabled}}on{{/enabled}}{{^enabled}}off{{/enabled}}{{#archived}}, archived{{/archived}}{{#potentiallyStale}}, stale{{/potentiallyStale}}</td><td>{{strategyCount}}</td><td>{{variantCount}}</td><td>{{owner}}</td></tr>{{/flags}}</tbody>
        </table></div>
        {{^flags}}<p>No flag.</p>{{/flags}}
        """

    static let flag = """
        <h1>{{detail.name}} <span class="id">{{detail.type}}</span></h1>
        {{#detail.description}}<p>{{detail.description}}</p>{{/detail.description}}
        <p>Owner {{detail.owner}}; created {{detail.createdAt}} by {{detail.createdBy}}{{#detail.archivedAt}}; archived {{detail.archivedAt}}{{/detail.archivedAt}}.</p>
        {{#controls}}<div class="controls">{{#forms}}{{{.}}}{{/forms}}</div>{{/controls}}
        {{#environments}}
        <section aria-labelledby="env-{{environment}}">
        <h2 id="env-{{environment}}">{{environment}}: {{#enabled}}on{{/enabled}}{{^enabled}}off{{/enabled}}</h2>
        <ul>{{#strategies}}<li>{{.}}</li>{{/strategies}}</ul>
        {{^strategies}}<p>No strategy: on for everyone while enabled.</p>{{/strategies}}
        {{#hasVariants}}<p>Variants: {{#variants}}{{name}} ({{weight}}) {{/variants}}</p>{{/hasVariants}}
        </section>
        {{/environments}}
        <section aria-labelledby="usage-h">
        <h2 id="usage-h">Usage</h2>
        <ul>{{#usage}}<li>{{environment}}: {{yes}} on, {{no}} off{{#lastSeen}}, last seen {{lastSeen}}{{/lastSeen}}</li>{{/usage}}</ul>
        {{^usage}}<p>No SDK has reported evaluating this flag.</p>{{/usage}}
        </section>
        """

    static let audit = """
        <h1>Audit log</h1>
        <p class="{{#verified}}ok{{/verified}}{{^verified}}bad{{/verified}}">{{verification}}</p>
        <form method="get" action="/ui/audit" class="filters">
        <label for="actor">Principal</label><input id="actor" name="actor" value="{{actor}}">
        <label for="target">Target</label><input id="target" name="target" value="{{target}}">
        <label for="action">Action</label><input id="action" name="action" value="{{action}}" placeholder="plugin.kill">
        <label for="since">Since</label><input id="since" name="since" value="{{since}}" placeholder="2026-11-27T00:00:00Z">
        <button type="submit">Filter</button>
        </form>
        <div class="scroll"><table class="audit">
        <thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Reason</th><th scope="col">Change</th></tr></thead>
        <tbody>{{#records}}<tr><td>{{seq}}</td><td>{{at}}</td><td>{{by}}{{#via}}<br><small>via {{via}}</small>{{/via}}</td><td>{{action}}{{#refused}} <strong class="bad">refused</strong>{{/refused}}</td><td>{{target}}</td><td>{{reason}}</td><td>{{#change}}<details><summary>before and after</summary><pre>{{before}}</pre><pre>{{after}}</pre></details>{{/change}}</td></tr>{{/records}}</tbody>
        </table></div>
        {{^records}}<p>No row matches.</p>{{/records}}
        {{#next}}<p><a href="{{next}}" rel="next">Older rows</a></p>{{/next}}
        """

    static let tokens = """
        <h1>Tokens</h1>
        <section aria-labelledby="access-h">
        <h2 id="access-h">{{#admin}}Access tokens{{/admin}}{{^admin}}Your access tokens{{/admin}}</h2>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Principal</th><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Rights</th><th scope="col">State</th><th scope="col">Expires</th><th scope="col">Last used</th>{{#controls}}<th scope="col">Revoke</th>{{/controls}}</tr></thead>
        <tbody>{{#access}}<tr><td>{{principal}}</td><td>{{name}}</td><td><code>{{prefix}}</code></td><td>{{#readOnly}}read-only{{/readOnly}}{{^readOnly}}read and write{{/readOnly}}</td><td>{{state}}</td><td>{{expiresAt}}</td><td>{{lastUsedAt}}</td>{{#controls}}<td>{{{revoke}}}</td>{{/controls}}</tr>{{/access}}</tbody>
        </table></div>
        </section>
        <section aria-labelledby="sdk-h">
        <h2 id="sdk-h">SDK and host tokens</h2>
        {{#admin}}
        <div class="scroll"><table>
        <thead><tr><th scope="col">Name</th><th scope="col">Environment</th><th scope="col">For</th><th scope="col">Prefix</th><th scope="col">State</th><th scope="col">Last used</th></tr></thead>
        <tbody>{{#sdk}}<tr><td>{{name}}</td><td>{{environment}}</td><td>{{kind}}</td><td><code>{{prefix}}</code></td><td>{{state}}</td><td>{{lastUsedAt}}</td></tr>{{/sdk}}</tbody>
        </table></div>
        {{/admin}}
        {{^admin}}<p>Only board admins see SDK and host tokens.</p>{{/admin}}
        </section>
        """

    static let rollouts = """
        <h1>Rollouts in {{env}}</h1>
        <form method="get" action="/ui/rollouts" class="filters">
        <label for="env">Environment</label>
        <select id="env" name="env">{{#environments}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/environments}}</select>
        <button type="submit">Show</button>
        </form>
        {{#rollouts}}
        <section class="rollout" aria-labelledby="r-{{anchor}}">
        <h2 id="r-{{anchor}}"><a href="{{href}}">{{pluginID}}</a> {{from}} → {{version}}: {{state}}</h2>
        <p>Step {{percent}}% ({{stepList}}){{#nextStepAt}}; next step at {{nextStepAt}}{{/nextStepAt}}. Guard: at most {{maxFailureRate}}% failing with at least {{minHosts}} hosts.</p>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Release</th><th scope="col">Hosts</th><th scope="col">Activated</th><th scope="col">Failed</th><th scope="col">Crashed</th><th scope="col">Quarantined</th><th scope="col">Failing</th></tr></thead>
        <tbody>{{#figures}}<tr><td>{{version}}</td><td>{{hosts}}</td><td>{{activated}}</td><td>{{failed}}</td><td>{{crashed}}</td><td>{{quarantined}}</td><td>{{rate}}</td></tr>{{/figures}}</tbody>
        </table></div>
        <ol class="steps">{{#history}}<li>{{percent}}% at {{reachedAt}} by {{by}}{{#figures}}: {{figures}}{{/figures}}</li>{{/history}}</ol>
        {{#controls}}<div class="controls">{{#forms}}{{{.}}}{{/forms}}</div>{{/controls}}
        </section>
        {{/rollouts}}
        {{^rollouts}}<p>No rollout in this environment.</p>{{/rollouts}}
        """

    static let refusal = """
        <h1>{{heading}}</h1>
        <p class="flash failed" role="alert">{{sentence}}</p>
        <p><a href="{{back}}">Back</a></p>
        """
}
