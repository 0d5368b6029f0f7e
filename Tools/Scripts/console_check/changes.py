"""Step 5 of Tools/Scripts/console-check: a change request opened by one person is approved by another in the browser.

The board's production is made to need one approval. Two people sign in, each in a browser of their own: AUTHOR, a
board admin whose token the board's maker made, and REVIEWER, a maintainer of both plug-ins, whose first token an OS
user of its own made on the board's machine (the person behind a token is the OS user at the root of its chain, so a
token the board's maker made would be the author's person again). REVIEWER keeps the Overview open while AUTHOR opens a request with the CLI
against the served board (`plugboard plugin enable … --env production --server URL`); it must appear on the
reviewer's Overview without a reload (through /ui/events). The author's browser shows the request's page: its note
that another person approves it and no Approve form. The reviewer follows the Overview's link, approves with a
comment, and the request is applied: the flash says so, the author's page shows `applied` without a reload, the CLI
finds the request applied and the plug-in enabled in production, and the Audit page shows the approval `via
console`. Last, the author enables another plug-in in production with the plug-in page's form, which must lead to the
new request's page; that request stays open for the axe and read-only steps. axe runs on the request's page as the
reviewer and as the author."""

import json
import os
import time

from plugboard_drills import common

from console_check.browser import Browser

AUTHOR = "author"
REVIEWER = "reviewer"
# The OS user (no passwd entry: `uid:4390` on the board) who makes the reviewer's first token as themselves.
REVIEWER_UID = 4390
# The Overview and the request's page must follow a change within this (as the Fleet page must follow a kill).
LIVE_PROMISE_MS = 2000
LIVE_DEADLINE_S = 30

# Notes the time (Date.now()) the page's main content first matches `selector`, without reloading it.
WATCH_JS = """
var selector = arguments[0];
window.__consoleCheck = { seenAt: null, refreshes: 0 };
function look() {
  if (window.__consoleCheck.seenAt === null && document.querySelector(selector)) {
    window.__consoleCheck.seenAt = Date.now();
  }
}
new MutationObserver(function () { window.__consoleCheck.refreshes += 1; look(); })
  .observe(document.getElementById("main"), { childList: true, subtree: true });
look();
"""


def change_requests(board, server, plugins, browsers, shots, figures, report):
    """Runs the step; answers the path of the request left open."""
    victim, other = plugins
    # Revive is board-wide: once an environment is protected it waits for approvals too, so production is protected
    # only now, after the kill step.
    board.ok("policy", "set", "--env", "production", "--approvals", "1")
    board.ok("admin", "add", AUTHOR)
    for plugin in plugins:
        board.ok("owner", "add", plugin, REVIEWER, "--role", "maintainer")
    author_token = board.json("access-token", "create", "--principal", AUTHOR, "--name", "console-author")["token"]
    reviewer_token = own_token(board, REVIEWER, "console-reviewer", REVIEWER_UID)
    author = signed_in(server, author_token, AUTHOR, browsers, report)
    reviewer = signed_in(server, reviewer_token, REVIEWER, browsers, report)

    # Opened with the CLI against the served board while the reviewer's Overview is open.
    link = 'section[aria-labelledby="waiting-h"] a[href^="/ui/changes/"]'
    reviewer.driver.execute_script(WATCH_JS, link)
    opened_at = time.time() * 1000
    result = common.run([board.binary, "plugin", "enable", victim, "--env", "production", "--server", server.url, "--json"],
                        env=dict(board.env, PLUGBOARD_TOKEN=author_token), cwd=board.folder)
    if result.code != 0:
        raise common.DrillError(f"the CLI could not open a change request: {result.describe()}")
    opened = json.loads(result.out)
    number, state = opened.get("id"), opened.get("state")
    if state != "open" or number is None:
        raise common.DrillError(f"plugin enable in production answered {common.one_line(result.out, 200)}, not an open request")
    report.log(f"the CLI through --server: {opened.get('message')}")
    page = f"/ui/changes/{number}"
    figures["request_ms"] = live(reviewer, opened_at, "the reviewer's Overview did not list the new request", report)
    found = reviewer.one(link, "link to the request")
    if found.get_attribute("href").split("#")[0] != server.url + page:
        report.fail(f"the reviewer's Overview links to {found.get_attribute('href')}, not {page}")

    author.open(page)
    notes = " ".join(note.text for note in author.find("#main .controls p"))
    if "you opened this request; another person approves it" not in notes.lower():
        report.fail(f"the author's view of {page} does not say another person approves it: {notes!r}")
    if author.find('form[action="/ui/do/change.approve"]'):
        report.fail(f"the author is offered an Approve form on {page}")
    author.check_page("change-author", shots, figures)
    author.driver.execute_script(WATCH_JS, "#main article.change > p > strong:first-child")

    reviewer.one(link, "link to the request").click()
    reviewer.wait(lambda: reviewer.path() == page, 30, f"the Overview's link did not lead to {page}")
    reviewer.wait(lambda: reviewer.find('form[action="/ui/do/change.approve"]'), 30, f"{page} showed no Approve form")
    reviewer.check_page("change", shots, figures)
    reviewer.open("/ui/changes")
    reviewer.check_page("changes-open", shots, figures)
    reviewer.open(page)
    reviewer.submit('form[action="/ui/do/change.approve"]', "Approve form", {"comment": "console-check: looks right"})
    flash = reviewer.flash()
    if reviewer.path() != page or f"change request {number} approved by {REVIEWER} and applied" not in flash:
        raise common.DrillError(f"the Approve form led to {reviewer.path()}: {flash!r}")
    report.log(f"approved in the reviewer's browser: {flash}")

    shown = common.eventually(lambda: applied_state(author), LIVE_DEADLINE_S, interval=0.05)
    if not shown:
        report.fail(f"the author's page of request {number} did not show it applied within {LIVE_DEADLINE_S} s "
                    f"without a reload")
    request = board.json("change", "show", str(number))
    approvers = [approval.get("principal") for approval in request.get("approvals", [])]
    states = board.json("plugin", "show", victim).get("environments", [])
    enabled = any(env.get("environment") == "production" and env.get("enabled") for env in states)
    if request.get("state") != "applied" or approvers != [REVIEWER]:
        report.fail(f"change show {number} says {request.get('state')} with the approvals of {approvers}")
    elif not enabled:
        report.fail(f"{victim} is not enabled in production after the approval: {states}")
    else:
        figures["applied"] = True
    reviewer.open("/ui/audit?action=change.approve")
    rows = [row.text for row in reviewer.find("#main table.audit tbody tr")]
    if not any(REVIEWER in row and "via console" in row for row in rows):
        report.fail(f"the Audit page shows no row change.approve by {REVIEWER} via console: {rows[:3]}")

    # A protected change made with a form leads to the request it opened.
    author.open(f"/ui/plugins/{other}?env=production")
    author.submit('form[action="/ui/do/plugin.enable"]', "Enable in production form", {})
    flash = author.flash()
    if not author.path().startswith("/ui/changes/") or "opened" not in flash:
        raise common.DrillError(f"the Enable form in production led to {author.path()}: {flash!r}")
    report.log(f"the Enable form in production led to {author.path()}: {flash}")
    return author.path()


def own_token(board, principal, name, uid):
    """The secret of a first access token of `principal` that the OS user `uid` makes on the board's machine as
    themselves (console-check runs as root): the board's maker makes `uid:N` an admin for the time it takes, opens the
    board's folder and files to it, and closes them again."""
    if os.geteuid() != 0:
        raise common.DrillError("console-check runs as root: the reviewer's token is made by an OS user of its own")
    user = f"uid:{uid}"
    board.ok("admin", "add", user)
    sidecars = [board.path + suffix for suffix in ("", "-wal", "-shm")]
    folders = []
    folder = board.folder
    while folder not in ("/", ""):
        folders.append(folder)
        folder = os.path.dirname(folder)
    modes = {path: os.stat(path).st_mode & 0o7777 for path in folders + sidecars if os.path.exists(path)}

    def become():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    try:
        for path in folders:
            os.chmod(path, modes[path] | 0o711)
        os.chmod(board.folder, 0o777)
        for path in sidecars:
            if os.path.exists(path):
                os.chmod(path, 0o666)
        result = board.cli("access-token", "create", "--principal", principal, "--name", name, "--json", preexec_fn=become)
    finally:
        for path in folders + sidecars:
            if os.path.exists(path):
                if path in sidecars:
                    os.chown(path, os.getuid(), os.getgid())
                os.chmod(path, modes.get(path, 0o600))
    board.ok("admin", "remove", user)
    if result.code != 0:
        raise common.DrillError(f"{user} could not make a token for {principal}: {result.describe()}")
    return json.loads(result.out)["token"]


def signed_in(server, token, principal, browsers, report):
    """A browser of its own, signed in with `token`."""
    browser = Browser(server.url, report)
    browsers.append(browser)
    browser.open("/ui/sign-in")
    browser.submit('form[action="/ui/sign-in"]', "sign-in form", {"token": token})
    if browser.path() != "/ui/":
        raise common.DrillError(f"{principal}'s sign-in led to {browser.path()}: {browser.flash()}")
    return browser


def live(browser, since_ms, what, report):
    """Waits for the watcher of WATCH_JS; the milliseconds from `since_ms`, or None (a failure reported)."""
    deadline = time.monotonic() + LIVE_DEADLINE_S
    while True:
        watched = browser.driver.execute_script("return window.__consoleCheck")
        if watched is None:
            report.fail(f"{what}: the page was reloaded (it must update itself through /ui/events)")
            return None
        if watched.get("seenAt") is not None:
            break
        if time.monotonic() >= deadline:
            report.fail(f"{what} within {LIVE_DEADLINE_S} s ({watched.get('refreshes')} changes of the page)")
            return None
        time.sleep(0.05)
    took = watched["seenAt"] - since_ms
    report.log(f"{browser.path()} showed it {took:.0f} ms after the CLI started, without a reload "
               f"({watched.get('refreshes')} changes of the page)")
    if took > LIVE_PROMISE_MS:
        report.fail(f"{what} within {LIVE_PROMISE_MS} ms: it took {took:.0f} ms")
    return took


def applied_state(browser):
    """Whether the request's page, never reloaded, shows the state `applied`."""
    if browser.driver.execute_script("return window.__consoleCheck") is None:
        return False
    # Read in one script: the page may swap its content between two WebDriver calls.
    state = browser.driver.execute_script(
        'var mark = document.querySelector("#main article.change > p > strong");'
        'return mark ? mark.textContent.trim() : null;')
    return state == "applied"
