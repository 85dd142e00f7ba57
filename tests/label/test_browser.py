"""The labeling page in a real headless Chromium (Debian's chromium + chromium-driver, driven by
Selenium): label by clicks and by keys, undo, reload, back button, escaping, the trajectory
viewer, and screenshots at 1280x800 and 390x844 (saved to tests/label/artifacts/)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.label import LabelStore, load_eval, select_pairs
from tests.label.conftest import label_server

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).parent / "artifacts"
XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """Headless Chromium. Under CI=true a missing browser FAILS the test (never skips)."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not shutil.which(p)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip)")
    if missing:
        why = f"needs {', '.join(missing)}: run .ci/browser-setup.sh"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"browser required under CI=true: {why}")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--window-size=1280,800",
    ):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _viewport(driver, width: int, height: int, mobile: bool = False) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )


def _shot(driver, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    driver.save_screenshot(str(path))
    print(f"screenshot: {path}")
    return path


def _pair_key(driver) -> str:
    return driver.find_element("css selector", "input[name=pair]").get_attribute("value")


def _progress(driver) -> str:
    return " ".join(driver.find_element("id", "progress").text.split())


def _mark_page(driver) -> str:
    """Tag the current document so `_wait_new_page` can tell when another one replaced it."""
    import uuid

    mark = uuid.uuid4().hex
    driver.execute_script("window.__ekMark = arguments[0];", mark)
    return mark


def _wait_new_page(driver, mark: str) -> None:
    """Wait (up to 30 s) until a new, fully loaded document replaced the one tagged `mark`.

    Polls a window variable rather than the staleness of an old element: Chromium can answer a
    query on a node of the unloading document with an inspector error (not a stale-element one),
    which made `staleness_of` flaky (CI run of stop 17). Errors while the page is between
    documents are retried."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return document.readyState === 'complete' && window.__ekMark === undefined"
        )
    )


@pytest.fixture
def xss_eval_dir(eval_dir: Path) -> Path:
    """Episode 1 (in the first pair) replied with markup and a script."""
    path = eval_dir / "trajectories.jsonl"
    lines = path.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["steps"][0]["reply"] = XSS
    lines[1] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    return eval_dir


def test_label_by_clicks_and_keys_undo_reload(browser, xss_eval_dir: Path):
    try:
        _label_by_clicks_and_keys_undo_reload(browser, xss_eval_dir)
    except Exception:
        _shot(browser, "failure.png")  # what the page looked like when the test failed
        (ARTIFACTS / "failure.html").write_text(browser.page_source)
        raise


def _label_by_clicks_and_keys_undo_reload(browser, xss_eval_dir: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    driver = browser
    total = len(select_pairs(load_eval(xss_eval_dir), "all"))
    with label_server(xss_eval_dir, "--labeler", "tester") as url:
        _viewport(driver, 1280, 800)
        driver.get(url + "/")
        assert _progress(driver) == f"0 of {total} labeled · {total} remaining"
        # escaping: the script is shown as text and never ran
        assert driver.execute_script("return window.__pwned") is None
        assert XSS in driver.find_element("css selector", ".pair").text
        _shot(driver, "label-1280x800.png")

        seen = []
        for i, button in enumerate(
            ["btn-left", "btn-right", "btn-tie", "btn-left", "btn-cant", "btn-right"]
        ):
            key = _pair_key(driver)
            seen.append(key)
            old = _mark_page(driver)
            driver.find_element("id", button).click()
            _wait_new_page(driver, old)
            assert _pair_key(driver) != key
            assert _progress(driver).startswith(f"{i + 1} of {total}")
        for i, k in enumerate(["1", "2", "3", "0", "2", "1"]):
            key = _pair_key(driver)
            seen.append(key)
            old = _mark_page(driver)
            ActionChains(driver).send_keys(k).perform()
            _wait_new_page(driver, old)
            assert _progress(driver).startswith(f"{7 + i} of {total}")
        assert len(set(seen)) == 12

        old = _mark_page(driver)
        ActionChains(driver).send_keys("u").perform()  # undo the last label
        _wait_new_page(driver, old)
        assert _pair_key(driver) == seen[-1]
        assert "Undone" in driver.find_element("id", "flash").text
        assert _progress(driver).startswith(f"11 of {total}")

        _shot(driver, "label-undo-1280x800.png")
        driver.refresh()
        assert _progress(driver) == f"11 of {total} labeled · {total - 11} remaining"
        driver.back()  # history works: a GET page, never a re-submitted form
        driver.forward()
        assert _progress(driver).startswith(f"11 of {total}")

        # a note, typed with Enter (which must not pick a side), then a click
        note = driver.find_element("id", "note")
        note.send_keys("both <fine>\n")
        assert _progress(driver).startswith(f"11 of {total}")
        old = _mark_page(driver)
        driver.find_element("id", "btn-left").click()
        _wait_new_page(driver, old)
        assert _progress(driver).startswith(f"12 of {total}")

        _viewport(driver, 390, 844, mobile=True)
        driver.refresh()
        _shot(driver, "label-390x844.png")
        bar = driver.find_element("css selector", ".bar")
        assert bar.is_displayed() and bar.size["width"] <= 390
        width = driver.execute_script("return document.documentElement.scrollWidth")
        assert width <= 390, f"horizontal scrolling on a phone: {width}px"

        _viewport(driver, 1280, 800)
        driver.get(url + "/trajectories?sort=return_desc&seed=1")
        rows = driver.find_elements("css selector", "#trajectories tbody tr")
        assert rows and all(r.find_elements("css selector", "td")[1].text == "1" for r in rows)
        returns = [float(r.find_elements("css selector", "td")[2].text) for r in rows]
        assert returns == sorted(returns, reverse=True)
        driver.get(url + "/trajectories?sort=return_asc&episode=1")
        assert XSS in driver.find_element("css selector", ".side").text
        assert driver.execute_script("return window.__pwned") is None
        _shot(driver, "trajectories-1280x800.png")

    labels = LabelStore(xss_eval_dir / "labels.sqlite").labels("tester")
    assert len([x for x in labels if x.label != "skip"]) == 12
    assert [x.note for x in labels if x.note] == ["both <fine>"]
