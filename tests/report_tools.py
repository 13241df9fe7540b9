"""Helpers for the report tests: project copies, headless Chromium, pdftoppm, blank-image checks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED_LINE = re.compile(r'^<p class="generated">Generated .*</p>$', re.M)
SVG_BLOCK = re.compile(r"<svg.*?</svg>", re.S)


def copy_project(dest: Path) -> Path:
    """A copy of the shipped project (registry, hardware, reports) outside any git checkout."""
    for folder in ("registry", "hardware", "reports"):
        shutil.copytree(ROOT / folder, dest / folder)
    return dest


def normalise(html: str, svg: bool = False) -> str:
    """The HTML with its one generated-at line (and optionally every inline SVG) replaced by a marker."""
    html = GENERATED_LINE.sub('<p class="generated">Generated (normalised)</p>', html)
    return SVG_BLOCK.sub("<svg><!-- chart (normalised) --></svg>", html) if svg else html


def need_tool(name: str) -> str:
    """Path of a command-line tool; skip when it is missing, but fail under CI (it must be installed)."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is required under CI (.ci/run installs it)")
        pytest.skip(f"{name} is not installed")
    return path


def chromium_screenshot(html_file: Path, png: Path, netlog: Path, profile: Path) -> None:
    """Render ``html_file`` in headless Chromium to ``png``, logging every network request to ``netlog``.

    Host names resolve to nothing (``MAP * ~NOTFOUND``), so even a request that slipped through
    could not reach a server; the net log shows whether the page tried.
    """
    exe = need_tool("chromium")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
           "--hide-scrollbars", f"--user-data-dir={profile}", "--host-resolver-rules=MAP * ~NOTFOUND",
           f"--log-net-log={netlog}", "--window-size=1280,1800", f"--screenshot={png}", html_file.as_uri()]
    subprocess.run(cmd, capture_output=True, timeout=120, check=True)


def page_requests(netlog: Path) -> list[str]:
    """URLs the page itself requested over the network, from a Chromium net log.

    Chromium's own background traffic carries the initiator ``not an origin``; a request made by a
    page loaded from ``file://`` carries ``null`` (opaque origin) or the page's origin.
    """
    data = json.loads(netlog.read_text())
    types = {v: k for k, v in data["constants"]["logEventTypes"].items()}
    out = []
    for e in data["events"]:
        p = e.get("params") or {}
        url = p.get("url")
        if types.get(e["type"]) == "URL_REQUEST_START_JOB" and url and p.get("initiator") != "not an origin":
            if not url.startswith(("file:", "data:")):
                out.append(url)
    return out


def pdf_pages(pdf: Path, outdir: Path, dpi: int = 40) -> list[Path]:
    """Render every page of ``pdf`` to PNG with pdftoppm; the PNG paths in page order."""
    exe = need_tool("pdftoppm")
    subprocess.run([exe, "-png", "-r", str(dpi), str(pdf), str(outdir / "page")], check=True, timeout=120,
                   capture_output=True)
    return sorted(outdir.glob("page-*.png"))


def ink_fraction(png: Path) -> float:
    """Fraction of pixels that are not (near) white: 0 for a blank page."""
    import matplotlib.image as mpimg

    img = mpimg.imread(str(png))
    rgb = img[..., :3]
    if rgb.dtype.kind in "ui":
        rgb = rgb / 255.0
    return float((rgb.min(axis=-1) < 0.9).mean())
