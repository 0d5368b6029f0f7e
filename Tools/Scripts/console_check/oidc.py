"""Step 7 of Tools/Scripts/console-check: a person signs in to the console with an identity provider, in the browser.

A real OpenID provider, oidc-provider-mock (PyPI; `.ci/run` installs it and sets $PLUGBOARD_OIDC_PROVIDER_MOCK), runs on
127.0.0.2, another site than the console on 127.0.0.1 (a site ignores the port: on 127.0.0.1 the provider's redirect
back would be a same-site navigation, and the browser's SameSite rules would not be tried). It knows one person,
whose `preferred_username` is the name of the board's first admin and whose group the board maps to the admin role
(`plugboard sso map-group`), with the check's board, before step 5 makes production need an approval (a mapping that
widens rights then is a change request). A second `plugboard serve --admin` has the provider (`--oidc-issuer`, a 0600
secret file).

In a browser of its own, the person opens /ui/sign-in (axe on it, with the provider's link), follows "Sign in with
NAME", types their subject into the provider's form and submits it. The provider sends the browser to the console's
callback, whose answer sets the session cookie (SameSite=Strict) on a page that leads on to /ui/ by its `Refresh`
header: the browser must land on /ui/ signed in, which it does only if it followed the header and sent the cookie
on that navigation. The header names the principal the board made for the account (the claim's name is taken, so
another), never the existing admin. The person kills a plug-in from its page; the audit row names them and says
`via console (oidc ISSUER) from …, auth_time …`; the revive form lifts the kill switch; Sign out ends the
session."""

import http.client
import json
import os
import socket
import subprocess
import urllib.parse

from plugboard_drills import common

from console_check.browser import COOKIE, Browser, get

DEFAULT_MOCK = "/tmp/oidc-venv/bin/oidc-provider-mock"
# The provider's address: loopback, but another site than the console's 127.0.0.1.
PROVIDER_HOST = "127.0.0.2"
PROVIDER_NAME = "Example SSO"
SUBJECT = "00u-console-check"
GROUP = "plugboard-console-admins"
BINDING_COOKIE = "plugboard_oidc"


class IdentityProvider:
    """oidc-provider-mock on a free port of PROVIDER_HOST, knowing SUBJECT as `name` (the board's first admin's name),
    and SUBJECT's group mapped to the admin role on `board`. Started with the check's board, before production needs
    approvals: a mapping that widens rights there is a change request, not a change."""

    def __init__(self, board, name):
        mock = os.environ.get("PLUGBOARD_OIDC_PROVIDER_MOCK") or DEFAULT_MOCK
        if not os.access(mock, os.X_OK):
            raise common.DrillError(
                f"oidc-provider-mock is not at {mock}: .ci/run installs it (oidc-provider-mock==0.4.8 in a Python 3.12 "
                "venv); elsewhere set PLUGBOARD_OIDC_PROVIDER_MOCK to its path")
        self.claimed = name
        self.process, self.issuer = start_provider(mock, name)
        try:
            mapped = board.ok("sso", "map-group", GROUP, "--issuer", self.issuer, "--role", "admin").text
            if "change request" in mapped:
                raise common.DrillError(f"plugboard sso map-group did not map the group: {common.one_line(mapped)}")
        except common.DrillError:
            self.stop()
            raise

    def stop(self):
        """Stops the provider with SIGTERM; kills it when it has not stopped after 10 s."""
        stop_provider(self.process)


def oidc_sign_in(board, provider, plugin, killed, browsers, shots, figures, report):
    """Step 7 with `provider` (an IdentityProvider); answers the principal the person signed in as."""
    server = None
    try:
        secret = board.write_file("oidc-client-secret", "console-check-not-a-secret\n")
        os.chmod(secret, 0o600)
        # A port chosen here: the callback URL the provider is given is made from --listen, and port 0 would be in it.
        server = common.Server(board, "--admin", "--oidc-issuer", provider.issuer, "--oidc-client-id",
                               "plugboard-console-check", "--oidc-client-secret-file", secret, "--oidc-groups-claim",
                               "groups", "--oidc-name", PROVIDER_NAME,
                               listen=f"127.0.0.1:{free_port('127.0.0.1')}").started()
        report.log(f"oidc-provider-mock at {provider.issuer}; serve --admin with it at {server.url}")
        # The provider's page links a stylesheet on a CDN: the check stays on this machine, and the page works without.
        browser = Browser(server.url, report, arguments=("--host-resolver-rules=MAP cdn.jsdelivr.net ~NOTFOUND",))
        browsers.append(browser)
        person = sign_in(browser, server, provider.issuer, provider.claimed, shots, figures, report)
        kill_as(browser, board, plugin, killed, person, provider.issuer, report)
        sign_out(browser, server, report)
        return person
    finally:
        if server is not None:
            for _, sentence in server.stop():
                report.fail(sentence)


def free_port(host):
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def start_provider(mock, name):
    """oidc-provider-mock on a free port of PROVIDER_HOST, knowing SUBJECT as `name`: (process, issuer)."""
    port = free_port(PROVIDER_HOST)
    claims = {"sub": SUBJECT, "preferred_username": name, "email": "person@example.com", "groups": [GROUP, "team-a"]}
    process = subprocess.Popen([mock, "--host", PROVIDER_HOST, "--port", str(port), "--require-nonce", "true",
                                "--user-claims", json.dumps(claims)],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    errors = []
    common.collect(process.stderr, errors)
    # The provider names itself after the Host header: it is reached by this one spelling only.
    issuer = f"http://{PROVIDER_HOST}:{port}"

    def discovered():
        if process.poll() is not None:
            return False
        connection = http.client.HTTPConnection(PROVIDER_HOST, port, timeout=5)
        try:
            connection.request("GET", "/.well-known/openid-configuration")
            response = connection.getresponse()
            return response.status == 200 and json.loads(response.read()).get("issuer") == issuer
        except (OSError, http.client.HTTPException, ValueError):
            return False
        finally:
            connection.close()

    if not common.eventually(discovered, 60):
        stop_provider(process)
        said = b"".join(errors).decode("utf-8", "replace")[-300:]
        raise common.DrillError(f"oidc-provider-mock did not answer its discovery document at {issuer} within 60 s "
                                f"(exit {process.poll()}): {common.one_line(said)}")
    return process, issuer


def stop_provider(process):
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def sign_in(browser, server, issuer, claimed, shots, figures, report):
    """The sign-in page's link, the provider's form, and the console signed in: the principal its header names."""
    from selenium.webdriver.common.by import By
    browser.open("/ui/sign-in")
    link = browser.one('a[href="/ui/oidc/start"]', "link to the identity provider")
    if link.text.strip() != f"Sign in with {PROVIDER_NAME}":
        report.fail(f"the sign-in page's provider link reads {link.text.strip()!r}, not 'Sign in with {PROVIDER_NAME}'")
    browser.check_page("sign-in-oidc", shots, figures)
    link.click()
    browser.wait(lambda: browser.driver.current_url.startswith(f"{issuer}/oauth2/authorize"), 30,
                 "the provider's link did not lead to the provider's sign-in")
    field = browser.one("#subject-input", "subject field of the provider's form")
    form = field.find_element(By.XPATH, "./ancestor::form")
    field.clear()
    field.send_keys(SUBJECT)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    # The callback's page leads on to /ui/ by itself; a dropped session cookie would end on /ui/sign-in instead.
    browser.wait(lambda: browser.driver.current_url.startswith(server.url)
                 and browser.path() in ("/ui/", "/ui/sign-in")
                 and browser.driver.execute_script("return document.readyState") == "complete", 30,
                 "the provider's answer did not lead back to /ui/ or /ui/sign-in")
    if browser.path() != "/ui/":
        raise common.DrillError(f"after the provider's answer the browser is at {browser.path()}, not /ui/ signed "
                                f"in (the session cookie set on the callback's answer did not reach /ui/): "
                                f"{browser.flash()}")
    came_from = browser.driver.execute_script("return document.referrer")
    if not came_from.startswith(f"{server.url}/ui/oidc/callback"):
        report.fail(f"/ui/ was not reached from the callback's page (its Refresh header); its referrer is "
                    f"{came_from!r}")
    person = browser.one("header .who span", "name of the person signed in").text.strip()
    if person == claimed or not person.startswith(f"{claimed}-"):
        report.fail(f"the console names the person {person!r}: not a new principal made from the claim {claimed!r} "
                    f"(that name is the board's first admin's)")
    cookies = {cookie["name"]: cookie for cookie in browser.driver.execute_cdp_cmd("Storage.getCookies", {})["cookies"]}
    session = cookies.get(COOKIE)
    kept = session and (session.get("sameSite"), session.get("httpOnly"), session.get("path"))
    if kept != ("Strict", True, "/ui"):
        report.fail(f"the session cookie is not HttpOnly, SameSite=Strict on /ui: {session}")
    if BINDING_COOKIE in cookies:
        report.fail(f"the sign-in's binding cookie {BINDING_COOKIE} is left in the browser after the callback")
    report.log(f"signed in with {PROVIDER_NAME} as {person} (the claim said {claimed!r}); the session cookie set on "
               "the callback's page reached /ui/ through its Refresh header")
    return person


def kill_as(browser, board, plugin, killed, person, issuer, report):
    """A kill from the plug-in's page, its audit row naming the person and the provider; then the revive."""
    browser.open(f"/ui/plugins/{plugin}")
    browser.submit('form[action="/ui/do/plugin.kill"]', "kill form", {"reason": "console-check: signed in with SSO"})
    if not browser.find(killed):
        raise common.DrillError(f"the kill form of the person signed in with {PROVIDER_NAME} led to {browser.path()}: "
                                f"{browser.flash()}")
    # One JSON object a line, oldest first: the newest kill's row.
    lines = board.ok("audit", "--action", "plugin.kill", "--limit", "1", "--json").text.splitlines()
    row = json.loads(lines[-1]) if lines else {}
    via = row.get("via") or ""
    if row.get("actor") != person or not via.startswith(f"console (oidc {issuer}) from ") or ", auth_time " not in via:
        report.fail(f"the kill's audit row is not by {person} via console (oidc {issuer}) from …, auth_time …: "
                    f"{common.one_line(row, 300)}")
    else:
        report.log(f"the kill's audit row: {row.get('action')} by {row.get('actor')} via {via}")
    revive = 'form[action="/ui/do/plugin.revive"]'
    reason = {"reason": "console-check: revived"} if browser.find(f'{revive} [name="reason"]') else {}
    browser.submit(revive, "revive form", reason)
    if browser.find(killed):
        raise common.DrillError(f"the revive form did not lift the kill switch: {browser.flash()}")


def sign_out(browser, server, report):
    cookie = browser.cookie()
    browser.submit('header form[action="/ui/sign-out"]', "Sign out button", {})
    if browser.path() != "/ui/sign-in":
        report.fail(f"Sign out of the session from {PROVIDER_NAME} led to {browser.path()}, not /ui/sign-in")
    status, location = get(server.port, "/ui/", cookie)
    if status != 303 or urllib.parse.urlsplit(location).path != "/ui/sign-in":
        report.fail(f"after Sign out, the session from {PROVIDER_NAME} got {status} {location} on GET /ui/, "
                    "not 303 to /ui/sign-in")
