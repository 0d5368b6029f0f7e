/// The templates of the change requests pages and of what waits for the person on the Overview.
extension ConsoleTemplates {
    /// `/ui/changes`: the filter, the emergencies to acknowledge, the requests (cards rendered by ``changeRequest``),
    /// the requests closed last.
    static let changes = """
        <h1>{{heading}}</h1>
        {{#hasPolicies}}<p>Protected environments: {{#policies}}<strong>{{environment}}</strong> needs {{approvals}} approval{{^one}}s{{/one}}{{#signed}}, signed{{/signed}}. {{/policies}}Stopping and narrowing changes are applied at once, always.</p>{{/hasPolicies}}
        {{^hasPolicies}}<p>No environment requires approvals: every change is applied at once. <code>plugboard policy set --env ENV --approvals N</code> protects one.</p>{{/hasPolicies}}
        <form method="get" action="/ui/changes" class="filters">
        <label for="state">State</label>
        <select id="state" name="state">{{#states}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/states}}</select>
        <button type="submit">Show</button>
        </form>
        {{#hasEmergencies}}
        <section aria-labelledby="emergencies-h">
        <h2 id="emergencies-h">Emergency changes to acknowledge</h2>
        {{#emergencies}}{{{.}}}{{/emergencies}}
        </section>
        {{/hasEmergencies}}
        <section aria-labelledby="requests-h">
        <h2 id="requests-h">{{listHeading}}</h2>
        {{#cards}}{{{.}}}{{/cards}}
        {{^cards}}<p>{{empty}}</p>{{/cards}}
        {{#next}}<p><a href="{{next}}" rel="next">Older requests</a></p>{{/next}}
        </section>
        {{#hasRecent}}
        <section aria-labelledby="recent-h">
        <h2 id="recent-h">Closed last</h2>
        <div class="scroll"><table>
        <thead><tr><th scope="col">#</th><th scope="col">Change</th><th scope="col">By</th><th scope="col">State</th><th scope="col">Closed</th><th scope="col">Reason</th></tr></thead>
        <tbody>{{#recent}}<tr><td><a href="/ui/changes/{{id}}">{{id}}</a></td><td>{{summary}}</td><td>{{author}}</td><td>{{state}}</td><td>{{closed}}</td><td>{{reason}}</td></tr>{{/recent}}</tbody>
        </table></div>
        </section>
        {{/hasRecent}}
        """

    /// One change request: the list's card, or the whole of its own page.
    static let changeRequest = """
        <article class="change" aria-labelledby="change-{{id}}-h">
        <{{heading}} id="change-{{id}}-h">{{#link}}<a href="/ui/changes/{{id}}">{{/link}}Change request {{id}}{{#link}}</a>{{/link}}: {{summary}}</{{heading}}>
        <p><strong>{{state}}</strong>{{#emergency}} <strong class="bad">emergency</strong>{{/emergency}} · opened {{openedAt}} by {{author}} · {{environment}}</p>
        {{#closed}}<p>{{closed}}.</p>{{/closed}}
        {{#emergency}}<p>{{#acknowledged}}{{acknowledged}}.{{/acknowledged}}{{^acknowledged}}<strong class="bad">Not acknowledged yet</strong>: another board admin acknowledges it.{{/acknowledged}}</p>{{/emergency}}
        {{#result}}<p>Note: {{result}}</p>{{/result}}
        <{{sub}}>Approvals: {{counted}}{{#signedRequired}}, signed{{/signedRequired}}{{#met}} (met){{/met}}</{{sub}}>
        <ul>{{#approvals}}<li>{{principal}}, {{at}}{{#signed}}, signed with key {{signed}}{{/signed}}: {{#counts}}<span class="ok">counts</span>{{/counts}}{{^counts}}<span class="bad">no longer counts</span> (the rows it approved moved since){{/counts}}{{#comment}}. “{{comment}}”{{/comment}}</li>{{/approvals}}</ul>
        {{^approvals}}<p>No approval yet.</p>{{/approvals}}
        {{#pending}}<p>{{#scheduledAt}}Scheduled for {{scheduledAt}}: applied then, once approved.{{/scheduledAt}}{{^scheduledAt}}Applied on its last approval.{{/scheduledAt}}</p>{{/pending}}
        <{{sub}}>What it changes</{{sub}}>
        {{#rows}}
        <div class="scroll"><table class="diff">
        <caption>{{action}}: {{target}}{{#created}} (new){{/created}}{{#removed}} (removed){{/removed}}</caption>
        <thead><tr><th scope="col">Field</th><th scope="col">Before</th><th scope="col">After</th></tr></thead>
        <tbody>{{#fields}}<tr><th scope="row">{{name}}</th><td><del>{{before}}</del></td><td><ins>{{after}}</ins></td></tr>{{/fields}}</tbody>
        </table></div>
        {{#same}}<p class="same">Unchanged: {{same}}</p>{{/same}}
        {{/rows}}
        {{^hasRows}}<p>No row: applying it changes nothing now.</p>{{/hasRows}}
        <details><summary>Operation and digest</summary><p><code>{{operation}}</code> <code>{{body}}</code></p><p>Digest <code>{{digest}}</code></p></details>
        {{#controls}}<div class="controls">{{#notes}}<p>{{.}}</p>{{/notes}}{{#forms}}{{{.}}}{{/forms}}</div>{{/controls}}
        </article>
        """

    /// The Overview's section of what waits for the person.
    static let waiting = """
        <section aria-labelledby="waiting-h">
        <h2 id="waiting-h">Waiting for you</h2>
        {{#readOnly}}<p>Your session is read-only: you can read these requests, not approve them.</p>{{/readOnly}}
        {{#nothing}}<p>No change request waits for you. <a href="/ui/changes">Change requests</a></p>{{/nothing}}
        {{#hasEmergencies}}<h3>Emergency changes to acknowledge</h3>
        <ul>{{#emergencies}}<li><a href="/ui/changes/{{id}}">Change request {{id}}</a>: {{summary}}; {{note}}</li>{{/emergencies}}</ul>{{/hasEmergencies}}
        {{#hasApprovable}}<h3>{{#readOnly}}Open requests of others{{/readOnly}}{{^readOnly}}To approve{{/readOnly}}</h3>
        <ul>{{#approvable}}<li><a href="/ui/changes/{{id}}">Change request {{id}}</a>: {{summary}}, by {{author}}; {{needs}}{{#approvedBy}}, approved by {{approvedBy}}{{/approvedBy}}{{#scheduled}}; scheduled for {{scheduled}}{{/scheduled}}{{#note}}; {{note}}{{/note}}</li>{{/approvable}}</ul>{{/hasApprovable}}
        {{#hasMine}}<h3>Your open requests</h3>
        <ul>{{#mine}}<li><a href="/ui/changes/{{id}}">Change request {{id}}</a>: {{summary}}; {{needs}}{{#approvedBy}}, approved by {{approvedBy}}{{/approvedBy}}{{#scheduled}}; scheduled for {{scheduled}}{{/scheduled}}</li>{{/mine}}</ul>{{/hasMine}}
        {{#more}}<p><a href="/ui/changes">{{more}}</a></p>{{/more}}
        </section>
        """
}
