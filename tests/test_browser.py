"""The pages in a real browser: headless Chromium (Debian's package, its own headless mode)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install "
                             "chromium); .ci/run installs it, so CI runs this test")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]


@pytest.fixture(scope="module")
def pages(mini_build):
    run, _ = mini_build
    return run.paths.report


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_page_loads_cleanly_and_every_audit_link_resolves(pages, tmp_path, lang):
    page = (pages / f"report.{lang}.html").as_uri()
    shot = tmp_path / f"report.{lang}.png"
    # one browser start gives the screenshot and the page as loaded
    out = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1100,1800", "--dump-dom",
                   page)
    assert shot.is_file() and shot.stat().st_size > 10_000, out.stderr[-2000:]
    problems = [ln for ln in out.stderr.splitlines()
                if re.search(r"CONSOLE.*(error|Uncaught)|net::ERR_|Failed to load", ln, re.I)]
    assert problems == []
    dom = out.stdout
    assert f'<html lang="{lang}">' in dom
    ids = set(re.findall(r'id="([^"]+)"', dom))
    links = re.findall(r'href="#([^"]+)"', dom)
    assert links and set(links) <= ids


PROBE = ('<script>window.addEventListener("load", () => {{ const p = document.createElement('
         '"pre"); p.id = "probe"; p.textContent = document.documentElement.scrollWidth + " " + '
         'window.innerWidth; document.body.appendChild(p); if (window.parent !== window) '
         'window.parent.postMessage(p.textContent, "*"); }});</script></body>')
# Headless Chromium's window is at least 500 px wide: a phone's width is a frame in it.
FRAME = ('<!DOCTYPE html><html><body style="margin:0"><iframe src="{src}" style="width:{w}px;'
         'height:900px;border:0"></iframe><script>window.addEventListener("message", e => {{ '
         'const p = document.createElement("pre"); p.id = "probe"; p.textContent = e.data; '
         'document.body.appendChild(p); }});</script></body></html>')


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_no_window_width_scrolls_the_page_sideways(reference_build, tmp_path, lang, width):
    """At a phone's width and a desktop's, the page is as wide as the window: wide tables
    (settings, caveats, claims) scroll inside their own box. The screenshot is what a
    reader sees."""
    page = (reference_build.paths.report / f"report.{lang}.html").read_text()
    probe = tmp_path / f"probe.{lang}.html"      # a copy with a measuring script added
    probe.write_text(page.replace("</body>", PROBE.format(), 1))
    target = probe
    if width < 500:
        target = tmp_path / f"frame.{lang}.html"
        target.write_text(FRAME.format(src=probe.name, w=width))
    size = f"--window-size={max(width, 500)},900"
    shot = tmp_path / f"{lang}-{width}.png"
    dom = chromium(tmp_path, size, f"--screenshot={shot}", "--virtual-time-budget=3000",
                   "--dump-dom", target.as_uri()).stdout
    assert shot.is_file() and shot.stat().st_size > 10_000
    scrolled, window = map(int, re.search(r'<pre id="probe">(\d+) (\d+)</pre>', dom).groups())
    assert window == width and scrolled <= window
