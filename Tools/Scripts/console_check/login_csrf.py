"""Step 6 of Tools/Scripts/console-check: a page on another port of the same host cannot sign a victim in.

The attacker reads a sign-in form of their own from the console (its CSRF token and the pre-session cookie it goes
with) and serves, on another port of 127.0.0.1, a page that plants that cookie (cookies do not tell ports apart) and
makes the victim's browser post the form with the attacker's access token. The victim's browser, a session of its own,
opens that page: the console must answer with its refusal (403, the sentence about the console's own page) and give
the browser no session cookie."""

import http.client
import http.server
import json
import threading

from plugboard_drills import common

from console_check.browser import Browser

ATTACK = """<!doctype html>
<html><head><meta charset="utf-8"><title>A page on another port</title></head>
<body>
<form id="f" method="post" action="{console}/ui/sign-in">
<input type="hidden" name="token" value="{token}"><input type="hidden" name="csrf" value="{csrf}">
</form>
<script>
document.cookie = {cookie} + "; path=/ui/sign-in";
document.getElementById("f").submit();
</script>
</body></html>
"""


def signin_form(port):
    """The attacker's own sign-in form: (csrf, cookie as NAME=VALUE)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/ui/sign-in")
        response = connection.getresponse()
        page = response.read().decode()
        cookie = (response.getheader("Set-Cookie") or "").split(";")[0]
    finally:
        connection.close()
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    return csrf, cookie


def login_csrf(server, attacker_token, browsers, report):
    """Step 6; answers the attacker page's origin."""
    csrf, cookie = signin_form(server.port)
    page = ATTACK.format(console=server.url, token=attacker_token, csrf=csrf, cookie=json.dumps(cookie)).encode()

    class Attack(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *_):
            pass

    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attack)
    thread = threading.Thread(target=attacker.serve_forever, daemon=True)
    thread.start()
    origin = f"http://127.0.0.1:{attacker.server_address[1]}"
    try:
        victim = Browser(server.url, report)
        browsers.append(victim)
        victim.driver.get(f"{origin}/attack.html")
        victim.wait(lambda: victim.driver.current_url.startswith(server.url), 30,
                    "the page on another port did not post its form to the console")
        victim.wait(lambda: victim.find("#main"), 30, "the console did not answer the posted form")
        text = common.one_line(victim.one("#main", "the console's answer").text, 300)
        if "a sign-in must come from the console's own page" not in text:
            report.fail(f"a sign-in posted by a page on another port ({origin}) was not refused by its origin: {text}")
        if victim.driver.get_cookie("plugboard_console") is not None:
            report.fail(f"a page on another port ({origin}) signed the victim's browser in")
    finally:
        attacker.shutdown()
        attacker.server_close()
    return origin
