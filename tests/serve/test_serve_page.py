"""The page at ``/`` in a real headless browser (Debian's chromium + chromedriver through selenium): paste a token,
ask, see the answer with its citations, a refusal with its reason, or the problem of a bad token.

Skipped with a reason when chromium / chromedriver / selenium are missing (``.ci/run`` installs them).
``RAGBENCH_SERVE_SCREENSHOT=docs/img/serve.png`` saves the answered page there (how the docs' picture was made)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .helpers import FAST, Server, token

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
if CHROMIUM is None or DRIVER is None:
    pytest.skip("chromium / chromedriver not found (apt-get install chromium chromium-driver)", allow_module_level=True)

from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve-page")
    with Server(tmp, ["--retriever", "bm25", "--rate-limit", "0", *FAST]) as s:
        yield s


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=900,640",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        opts.add_argument(arg)
    try:
        driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    except Exception as exc:  # noqa: BLE001 - a broken browser install is an environment problem, not a failure of the page
        pytest.skip(f"headless chromium did not start: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def ask(browser, server, tok: str, question: str) -> tuple[str, str, list[str]]:
    browser.get(server.base + "/")
    box = browser.find_element(By.ID, "token")
    box.clear()
    box.send_keys(tok)
    q = browser.find_element(By.ID, "question")
    q.clear()
    q.send_keys(question)
    browser.find_element(By.ID, "ask").click()
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.ID, "result").get_attribute("class") in ("answer", "refused", "error"))
    result = browser.find_element(By.ID, "result")
    return (result.get_attribute("class"), browser.find_element(By.ID, "status").text,
            [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#citations li")])


def test_answer_with_citations(browser, server):
    kind, status, cites = ask(browser, server, token("page-user", ["employee"], ["hr"], "Confidential"),
                              "How many days of annual leave do full-time employees get?")
    assert (kind, status) == ("answer", "Answer")
    assert "25 days" in browser.find_element(By.ID, "answer").text
    assert cites and cites[0].startswith("[1] HR Policy: Annual leave and sick leave (hr-leave)")
    WebDriverWait(browser, 5).until(ec.text_to_be_present_in_element((By.ID, "meta"), "bm25"))
    shot = os.environ.get("RAGBENCH_SERVE_SCREENSHOT")
    if shot:
        Path(shot).parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(shot)


def test_refusal_shows_its_reason(browser, server):
    kind, status, cites = ask(browser, server, token("page-guest", ["guest"], [], "Public"),
                              "What is the guest Wi-Fi password at the moon base?")
    assert kind == "refused" and status.startswith("Refused: ") and cites == []
    assert status.removeprefix("Refused: ") in ("insufficient-retrieval", "insufficient-grounding",
                                                "unanswerable-question", "model-refused")


def test_bad_token_shows_the_problem(browser, server):
    kind, status, _ = ask(browser, server, "not-a-token", "anything")
    assert kind == "error" and status == "Unauthorized (401)"
    assert "malformed bearer token" in browser.find_element(By.ID, "answer").text
