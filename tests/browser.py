"""A headless Chromium driver for the page tests, with no Python dependency: Chromium's own --dump-dom
(the DOM after the page's scripts ran, within a virtual-time budget) and --screenshot. Pages keep their
script errors on <body data-errors> (report.html has no script; view.html collects them itself)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium() -> str | None:
    """The browser's path, or None (tests that need it skip, saying so)."""
    return next((p for p in (shutil.which(n) for n in NAMES) if p), None)


def _args(profile: Path) -> list[str]:
    args = ["--headless", "--disable-gpu", "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}",
            "--virtual-time-budget=15000", "--hide-scrollbars"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")          # Chromium refuses to sandbox as root (CI runs as root)
    return args


def dump_dom(url: str, profile: Path, width: int = 1280, timeout: float = 120) -> str:
    out = subprocess.run([chromium(), *_args(profile), f"--window-size={width},900", "--dump-dom", url],
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def screenshot(url: str, path: Path, profile: Path, width: int = 1280, height: int = 900, timeout: float = 120) -> Path:
    out = subprocess.run([chromium(), *_args(profile), f"--window-size={width},{height}", f"--screenshot={path}", url],
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0 and path.exists(), out.stderr[-2000:]
    return path
