"""The floor page in headless Chromium (Selenium) against a synthetic 120-table room fed from
Mosquitto: every table on one 1920x1080 screen with no scrolling and legible text, a stop on
the page within 1 s of its event (measured), the alert acknowledged and logged in the ledger,
a shoe whose connection died shown offline (its last will), and no card anywhere in the DOM."""

import json
import os
import re
import time
import urllib.error
import urllib.request

import pytest

from facedown.engine import firmware_imports
from facedown.room import Room

from services import chromium, mosquitto

TABLES = 120
CARD = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][cdhs](?![A-Za-z0-9])")
MIN_PX = 12


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    mosquitto()
    folder = str(tmp_path_factory.mktemp("room"))
    names = {"light-%03d" % (i + 1): {"table": "Table %d" % (i + 1), "dealer": "Dealer %d" % (
        i + 1)} for i in range(TABLES)}
    r = Room(folder, names=names).start(light=TABLES, rate=2.0,
                                        light_options={"jams": 0.05, "misdeals": 0.02})
    try:
        yield r
    finally:
        r.close()


@pytest.fixture(scope="module")
def browser(room):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    path, driver = chromium()
    opts = webdriver.ChromeOptions()
    opts.binary_location = path
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--window-size=1920,1080", "--force-device-scale-factor=1"):
        opts.add_argument(flag)
    b = webdriver.Chrome(service=Service(driver), options=opts)
    try:
        b.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": 1920, "height": 1080, "deviceScaleFactor": 1, "mobile": False})
        b.get(room.page.url)
        wait(lambda: len(tiles(b)) == TABLES, 20, "120 tables on the page")
        yield b
    finally:
        b.quit()


def wait(cond, timeout, what, step=0.01):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return time.monotonic()
        time.sleep(step)
    raise AssertionError("not within %.0f s: %s" % (timeout, what))


def tiles(b):
    return b.execute_script("return [...document.querySelectorAll('#map .t')].map(d => "
                            "[d.dataset.shoe, d.dataset.state])")


def state_of(b, shoe):
    return b.execute_script("const d = document.querySelector('#map .t[data-shoe=\"' + "
                            "arguments[0] + '\"]'); return d && d.dataset.state", shoe)


def test_all_120_tables_legible_on_one_screen_without_scrolling(browser):
    geo = browser.execute_script("""
        const r = [...document.querySelectorAll('#map .t')].map(d => d.getBoundingClientRect());
        const sizes = [...document.querySelectorAll('#map .t, #map .t *, #alerts *')]
            .filter(e => e.textContent.trim()).map(e => parseFloat(getComputedStyle(e).fontSize));
        return {w: innerWidth, h: innerHeight, sw: document.documentElement.scrollWidth,
                sh: document.documentElement.scrollHeight, min: Math.min(...sizes),
                out: r.filter(b => b.left < 0 || b.top < 0 || b.right > innerWidth ||
                              b.bottom > innerHeight || b.width < 60 || b.height < 40).length,
                clipped: [...document.querySelectorAll('#map .t .n')]
                    .filter(e => e.scrollWidth > e.clientWidth + 1).length};
    """)
    assert (geo["w"], geo["h"]) == (1920, 1080), geo
    assert geo["sw"] <= geo["w"] and geo["sh"] <= geo["h"], "the page scrolls: %s" % geo
    assert geo["out"] == 0, "%d tables are off the screen or too small" % geo["out"]
    assert geo["min"] >= MIN_PX, "text at %.1f px" % geo["min"]
    assert geo["clipped"] == 0, "table names cut off"
    names = browser.execute_script("return [...document.querySelectorAll('#map .t .n')]"
                                   ".map(e => e.textContent)")
    assert sorted(names) == sorted("Table %d" % (i + 1) for i in range(TABLES))


def test_a_stop_shows_within_1s_and_its_alert_is_acknowledged_and_logged(room, browser):
    z = firmware_imports().zones
    shoe = room.light[6]
    shoe.pause()
    sink = shoe.sink
    shoe.number += 1
    t0 = time.monotonic()
    sink.offer(shoe.number, shoe.hand, bytes((z.OP_FAULT, 2, z.BOARD, 0)), time.time())
    t1 = wait(lambda: state_of(browser, shoe.shoe) == "stopped", 5, "the stop on the page")
    print("event to page: %.0f ms" % ((t1 - t0) * 1000))
    assert t1 - t0 < 1.0, "the page showed the stop %.2f s after its event" % (t1 - t0)
    assert "empty" in browser.execute_script(
        "return document.querySelector('#map .t[data-shoe=\"%s\"]').textContent" % shoe.shoe)
    button = '#alerts .a[data-shoe="%s"][data-kind="stopped"] button' % shoe.shoe
    wait(lambda: browser.execute_script("return !!document.querySelector(arguments[0])",
                                        button), 5, "the alert")
    browser.execute_script("document.querySelector(arguments[0]).click()", button)
    wait(lambda: any(a["acked"] and a["kind"] == "stopped" for a in
                     room.ledger.alerts(shoe.shoe)), 5, "the acknowledgement in the ledger")
    logged = [a for a in room.ledger.alerts(shoe.shoe) if a["kind"] == "stopped"]
    assert logged[-1]["acked_by"] == "floor" and logged[-1]["detail"] == "empty"
    wait(lambda: not browser.execute_script("return !!document.querySelector(arguments[0])",
                                            button), 5, "the alert gone from the page")


def test_a_shoe_whose_connection_dies_shows_offline_by_its_last_will(room, browser):
    shoe = room.light[41]
    t0 = time.monotonic()
    shoe.crash()
    t1 = wait(lambda: state_of(browser, shoe.shoe) == "offline", 15, "offline on the page",
              step=0.05)
    print("offline on the page: %.2f s" % (t1 - t0))
    assert any(a["kind"] == "offline" for a in room.ledger.alerts(shoe.shoe))


def test_no_card_in_the_dom_or_the_pages_data(room, browser):
    time.sleep(1.0)   # hands dealt meanwhile (2 events/s a table)
    assert sum(s.offered for s in room.light) > 500
    dom = browser.execute_script("return document.getElementById('main').outerHTML")
    data = urllib.request.urlopen(room.page.url + "floor?since=-1", timeout=5).read().decode()
    for where, text in (("DOM", dom), ("/floor", data)):
        found = CARD.findall(text)
        assert not found, "cards in the page's %s: %s" % (where, found[:5])
    shot = os.environ.get("FACEDOWN_SCREENSHOT")
    if shot:
        browser.save_screenshot(shot)
    assert json.loads(data)["tables"]


def test_the_ledger_queries_on_the_floor_pages_api(room):
    # Under xdist this test may be the module's first: the room has just started, and a shoe
    # is in the ledger only once its first hand has been written (CI of stop 26 saw light-120
    # missing), so the ledger is given the time the page is given to show every table.
    def listed():
        shoes = json.loads(urllib.request.urlopen(room.page.url + "api/ledger/shoes",
                                                  timeout=5).read())
        return {"light-001", "light-120"} <= {s["shoe"] for s in shoes}
    wait(listed, 20, "light-001 and light-120 in the ledger", step=0.2)
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(room.page.url + "api/ledger/export?shoe=light-001", timeout=5)
    assert e.value.code == 404
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(room.page.url + "api/ledger/card?shoe=light-001&hand=1", timeout=5)
    assert e.value.code == 400 and b"--card" in e.value.read()
