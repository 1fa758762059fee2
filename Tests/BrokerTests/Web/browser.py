#!/usr/bin/env python3
"""A real browser for the chat page's tests (chatbroker(7), "The web door").

Debian's chromium, headless, driven by its chromedriver through selenium.
Run as root, it starts chromedriver (and so chromium) as the Unix user given
with --user, so that the kernel names that user as the owner of the page's
connections, as the web door requires; screenshots are written by this
process. It reads one JSON command a line on standard input and answers each
with one line: "OK <json value>" or "ERR <reason>". Every wait is bounded.
"""
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(user, zone, width, height, dark, notifications, host_rules):
    """chromedriver as `user`, in a clean environment with its own home."""
    home = tempfile.mkdtemp(prefix="cbweb-")
    account = pwd.getpwnam(user)
    os.chown(home, account.pw_uid, account.pw_gid)
    port = free_port()
    command = [
        "/usr/bin/setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups",
        "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", f"HOME={home}", f"TZ={zone}",
        "LANG=en_US.UTF-8", "/usr/bin/chromedriver", f"--port={port}",
    ]
    driver_process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or driver_process.poll() is not None:
                raise RuntimeError("chromedriver did not start")
            time.sleep(0.05)
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in [
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        "--lang=en-US", f"--window-size={width},{height}", f"--user-data-dir={home}/profile",
        "--no-first-run", "--disable-extensions", "--hide-scrollbars",
    ]:
        options.add_argument(argument)
    if host_rules:
        # Names resolved as the rules say, as after a DNS rebinding:
        # "MAP evil.test 127.0.0.1" puts another site on the door's address.
        options.add_argument(f"--host-resolver-rules={host_rules}")
    if notifications:
        # As if the user had allowed notifications for the page.
        options.add_experimental_option(
            "prefs", {"profile.default_content_setting_values.notifications": 1})
    if dark:
        # prefers-color-scheme: dark, as a system in dark mode gives it.
        options.add_argument("--force-dark-mode")
    driver = webdriver.Remote(command_executor=f"http://127.0.0.1:{port}", options=options)
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(20)
    return driver, driver_process, home


def wait(driver, script, timeout):
    """The first truthy value of `script`, tried until `timeout` seconds."""
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda d: d.execute_script(script), message=f"not within {timeout} s: {script}")


def handle(driver, command):
    operation = command["op"]
    if operation == "open":
        driver.get(command["url"])
        return None
    if operation == "js":
        return driver.execute_script(command["script"])
    if operation == "wait":
        value = wait(driver, command["script"], command.get("timeout", 10))
        return True if isinstance(value, WebElement) else value
    if operation == "type":
        element = WebDriverWait(driver, 10).until(
            lambda d: d.find_element(By.CSS_SELECTOR, command["css"]))
        keys = command.get("text", "")
        for key in command.get("keys", []):
            keys += getattr(Keys, key)
        element.send_keys(keys)
        return None
    if operation == "click":
        WebDriverWait(driver, 10).until(
            lambda d: d.find_element(By.CSS_SELECTOR, command["css"])).click()
        return None
    if operation == "screenshot":
        os.makedirs(os.path.dirname(command["path"]), exist_ok=True)
        driver.save_screenshot(command["path"])
        return command["path"]
    if operation == "size":
        driver.set_window_size(command["width"], command["height"])
        return None
    raise ValueError(f"no operation {operation}")


def main():
    arguments = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    driver, driver_process, home = start(
        arguments.get("--user", "nobody"), arguments.get("--zone", "UTC"),
        int(arguments.get("--width", "1100")), int(arguments.get("--height", "760")),
        arguments.get("--dark", "0") == "1", arguments.get("--notifications", "0") == "1",
        arguments.get("--host-rules", ""))
    print("READY", flush=True)
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            command = json.loads(line)
            if command["op"] == "quit":
                break
            try:
                value = handle(driver, command)
                print("OK " + json.dumps(value), flush=True)
            except Exception as error:  # every failure is an answer, not an end
                reason = " ".join(str(error).split())[:2000] or type(error).__name__
                print("ERR " + reason, flush=True)
    finally:
        try:
            driver.quit()
        finally:
            driver_process.terminate()
            try:
                driver_process.wait(5)
            except subprocess.TimeoutExpired:
                driver_process.kill()
            shutil.rmtree(home, ignore_errors=True)
    # Answered only now, with Chromium gone: the caller may then kill this.
    print("OK null", flush=True)


if __name__ == "__main__":
    main()
