"""The browser of Tools/Scripts/console-check: one headless Chromium (Debian's `chromium` and `chromium-driver`) driven
by Selenium 4, with a profile of its own, and the console's HTTP calls made without a browser."""

import http.client
import os
import shutil
import tempfile
import time
import urllib.parse

from plugboard_drills import common

COOKIE = "plugboard_console"
# A page that takes longer than this to load fails the check: the server renders one in milliseconds, but a browser
# whose few connections to the server are all held (by the change streams of pages it left) waits up to a minute.
PAGE_LOAD_S = 15

class Browser:
    """One headless Chromium with a profile of its own (a browser session of its own); failures and notes go to
    `report` (a common.Report); `arguments` are added to Chromium's command line."""

    def __init__(self, url, report, arguments=()):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.url = url
        self.report = report
        self.profile = tempfile.mkdtemp(prefix="plugboard-console-chromium-")
        chrome = webdriver.ChromeOptions()
        chrome.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=1280,900", "--no-first-run", "--disable-extensions",
                         "--disable-background-networking", "--disable-renderer-backgrounding",
                         "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows",
                         f"--user-data-dir={self.profile}", *arguments):
            chrome.add_argument(argument)
        service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
        try:
            self.driver = webdriver.Chrome(options=chrome, service=service)
        except Exception:
            shutil.rmtree(self.profile, ignore_errors=True)
            raise
        self.driver.set_page_load_timeout(60)
        self.driver.set_script_timeout(60)
        self.viewport(1280, 900)

    def quit(self):
        try:
            self.driver.quit()
        except Exception:  # already gone
            pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def viewport(self, width, height, mobile=False):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})

    def open(self, path):
        began = time.monotonic()
        self.driver.get(self.url + path)
        took = time.monotonic() - began
        if took > PAGE_LOAD_S:
            self.report.fail(f"{path} took {took:.1f} s to load (more than {PAGE_LOAD_S} s)")
        elif took > 2:
            self.report.log(f"note: {path} took {took:.1f} s to load")
        return self.driver.current_url

    def find(self, selector):
        from selenium.webdriver.common.by import By
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def one(self, selector, what):
        found = self.find(selector)
        if not found:
            raise common.DrillError(f"{self.path()} has no {what} (`{selector}`)")
        return found[0]

    def path(self):
        return urllib.parse.urlsplit(self.driver.current_url).path

    def wait(self, check, timeout, what):
        """Waits (bounded) until `check()` is true; a DrillError saying `what` did not happen otherwise."""
        answer = common.eventually(check, timeout, interval=0.05)
        if not answer:
            raise common.DrillError(f"{what} within {timeout} s (at {self.path()})")
        return answer

    def submit(self, selector, what, values):
        """Fills `values` (name → text) into the form `selector` and presses its submit button; waits for the next
        page. A live page may swap its content in between: the form is then found again."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By
        for attempt in range(5):
            try:
                form = self.one(selector, what)
                for name, value in values.items():
                    field = form.find_element(By.NAME, name)
                    field.clear()
                    field.send_keys(value)
                old = self.driver.find_element(By.TAG_NAME, "html")
                form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
                break
            except StaleElementReferenceException:
                if attempt == 4:
                    raise
        self.wait(lambda: stale(old) and self.driver.execute_script("return document.readyState") == "complete", 60,
                  f"the answer to the {what} did not load")

    def cookie(self):
        found = self.driver.get_cookie(COOKIE)
        return found["value"] if found else None

    def csrf(self):
        return self.one('form[action="/ui/sign-out"] input[name="csrf"]', "CSRF token").get_attribute("value")

    def sign_in(self, token, shots, figures):
        self.open("/ui/sign-in")
        self.check_page("sign-in", shots, figures)
        self.submit('form[action="/ui/sign-in"]', "sign-in form", {"token": token})
        if self.path() != "/ui/":
            raise common.DrillError(f"signing in led to {self.path()}, not /ui/: {self.flash()}")

    def flash(self):
        found = self.find("#main .flash")
        return common.one_line(found[0].text) if found else ""

    def check_page(self, name, shots, figures, phone=False):
        """A screenshot of the page shown (before axe, which may scroll it), then axe on it."""
        from axe_selenium_python import Axe
        figures["pages"] += 1
        self.driver.execute_script("window.scrollTo(0, 0);")
        self.shoot(shots, f"{name}.png", figures)
        if phone:
            self.viewport(390, 844, mobile=True)
            try:
                self.shoot(shots, f"{name}-phone.png", figures)
            finally:
                self.viewport(1280, 900)
        axe = Axe(self.driver)
        axe.inject()
        results = axe.run()
        violations = results.get("violations", [])
        for violation in violations:
            nodes = violation.get("nodes", [])
            where = "; ".join(common.one_line(node.get("target"), 80) for node in nodes[:3])
            text = (f"axe on {self.path()}: {violation.get('impact')} {violation['id']}: {violation['help']} "
                    f"({len(nodes)} elements: {where})")
            if violation.get("impact") in ("serious", "critical"):
                figures["violations"] += 1
                self.report.fail(text)
            else:
                self.report.log(f"note: {text}")
        figures["rules"] = figures.get("rules", 0) + len(results.get("passes", []))

    def shoot(self, folder, name, figures):
        if not self.driver.save_screenshot(os.path.join(folder, name)):
            raise common.DrillError(f"no screenshot of {self.path()}")
        figures["shots"] += 1


def stale(element):
    """Whether `element` is gone with the page it was on."""
    from selenium.common.exceptions import WebDriverException
    try:
        element.tag_name
        return False
    except WebDriverException:  # stale, or (Chromium) "Node with given id does not belong to the document"
        return True


def post(port, path, fields, cookie):
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"{COOKIE}={cookie}"}
    return common.request(port, "POST", path, body=urllib.parse.urlencode(fields).encode(), headers=headers)


def get(port, path, cookie):
    """(status, Location) of a GET with the session cookie, redirects not followed."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Cookie": f"{COOKIE}={cookie}"})
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Location") or ""
    except (OSError, http.client.HTTPException) as error:
        return None, str(error)
    finally:
        connection.close()
