"""The services the room's tests need (PostgreSQL, Mosquitto, Chromium): found running, or
started here; missing, the test FAILS when $CI is set (.ci/run installs and starts them all,
.ci/services) and is skipped with the way to get it on a developer's machine."""

import os
import shutil
import subprocess
import uuid

import pytest

from conftest import ROOT
PG_DEFAULT = "postgresql://facedown:facedown@127.0.0.1:5432/facedown"
HOW = "as root: bash .ci/services (installs and starts them on loopback)"


def missing(service, why):
    text = "%s is not available (%s); %s" % (service, why, HOW)
    if os.environ.get("CI"):
        pytest.fail("CI: " + text)
    pytest.skip(text)


def _pg_connect(url):
    import psycopg

    return psycopg.connect(url, autocommit=True, connect_timeout=5)


def postgres_url():
    """A URL of a fresh database of this test run's on the room's PostgreSQL (dropped by the
    caller with drop_database)."""
    import psycopg

    url = os.environ.get("FACEDOWN_PG_URL") or PG_DEFAULT
    try:
        conn = _pg_connect(url)
    except psycopg.Error as first:
        if os.geteuid() == 0 and shutil.which("pg_ctlcluster"):
            subprocess.run(["bash", os.path.join(ROOT, ".ci", "services")], check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        try:
            conn = _pg_connect(url)
        except psycopg.Error:
            missing("PostgreSQL", str(first).strip().splitlines()[0])
    name = "facedown_test_%s" % uuid.uuid4().hex[:10]
    with conn:
        conn.execute("CREATE DATABASE %s" % name)
    base = url.rsplit("/", 1)[0]
    return "%s/%s" % (base, name)


def drop_database(url):
    base, name = url.rsplit("/", 1)
    try:
        with _pg_connect(os.environ.get("FACEDOWN_PG_URL") or PG_DEFAULT) as conn:
            conn.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % name)
    except Exception:
        pass


def mosquitto():
    """The broker's binary."""
    for path in (shutil.which("mosquitto"), "/usr/sbin/mosquitto"):
        if path and os.access(path, os.X_OK):
            return path
    missing("Mosquitto", "no mosquitto binary")


def chromium():
    """(chromium, chromedriver) paths."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        missing("Chromium", "chromium and chromium-driver are needed")
    return browser, driver
