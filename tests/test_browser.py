"""The pages in a real browser: headless Chromium (Debian's package, its own headless mode)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchreport.build.pipeline import build

from .conftest import copy_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install "
                             "chromium); .ci/run installs it, so CI runs this test")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory, request):
    ws = tmp_path_factory.mktemp("browser")
    (ws / "data").mkdir()
    copy_run(ws, "mini")
    build("mini", data_root=ws / "data", report_root=ws / "report",
          project=Path(request.config.rootpath), out=lambda line: None)
    return ws / "report" / "mini"


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_page_loads_cleanly_and_every_audit_link_resolves(pages, tmp_path, lang):
    page = (pages / f"report.{lang}.html").as_uri()
    shot = tmp_path / f"report.{lang}.png"
    out = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1100,1800", page)
    assert shot.is_file() and shot.stat().st_size > 10_000, out.stderr[-2000:]
    problems = [ln for ln in out.stderr.splitlines()
                if re.search(r"CONSOLE.*(error|Uncaught)|net::ERR_|Failed to load", ln, re.I)]
    assert problems == []
    dom = chromium(tmp_path, "--dump-dom", page).stdout
    assert f'<html lang="{lang}">' in dom
    ids = set(re.findall(r'id="([^"]+)"', dom))
    links = re.findall(r'href="#([^"]+)"', dom)
    assert links and set(links) <= ids


PROBE = ('<script>window.addEventListener("load", () => {{ const p = document.createElement('
         '"pre"); p.id = "probe"; p.textContent = document.documentElement.scrollWidth + " " + '
         'window.innerWidth; document.body.appendChild(p); }});</script></body>')


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_a_narrow_window_does_not_scroll_sideways(reference_build, tmp_path, lang):
    """Wide tables (settings, caveats, claims) scroll inside their own box on a phone-sized
    window; the page itself stays as wide as the window."""
    page = (reference_build.paths.report / f"report.{lang}.html").read_text()
    probe = tmp_path / f"probe.{lang}.html"      # a copy with a measuring script added
    probe.write_text(page.replace("</body>", PROBE.format(), 1))
    dom = chromium(tmp_path, "--window-size=420,900", "--dump-dom", probe.as_uri()).stdout
    width, window = map(int, re.search(r'<pre id="probe">(\d+) (\d+)</pre>', dom).groups())
    assert width <= window
