"""The built wheel carries the package data read through importlib.resources (CONVENTIONS habit 9)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_contains_the_sql_files(tmp_path):
    # Build from a copy so the checkout gets no build/ or egg-info debris.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "kvreg", src / "kvreg", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
                   check=True, capture_output=True, text=True, timeout=300)
    (wheel,) = out.glob("kvreg-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {p.relative_to(ROOT).as_posix() for folder in ("sql", "checks")
                for p in (ROOT / "kvreg" / folder).glob("*.sql")}
    assert len(expected) >= 9
    assert expected <= names, sorted(expected - names)
    assert "kvreg/cli.py" in names
