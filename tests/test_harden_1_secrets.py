"""Issue 16, class 1: no secret on disk. Every way a key can be handed to a run — an override by name,
under -m, inside a header mapping, as a value, in a URL's userinfo, in the environment (and echoed back
by a failing server) — and every file the run wrote, the response cache and $HOME are searched for it."""
from __future__ import annotations

import os

import pytest

from bench.harness.strategy import Strategy
from bench.testing import LoopbackServer
from harden import WATCH, cli, files_hold, one_line

SECRET = "sk-hardening-9f8e7d6c5b4a3f2e1d"
OTHER = "sk-hardening-0a1b2c3d4e5f6a7b8c"
BASE = ["suite=smoke", "strategies=[truncate]", "probes.enabled=false"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A $HOME of the test's own (the default response cache lives under it), searched afterwards."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("XDG_CACHE_HOME", str(h / ".cache"))
    return h


REFUSED = {   # overrides carrying a secret: one line, exit 2, before anything is written
    "name": ["+writer.api_key={S}"],
    "name-litellm-writer": ["writer.model=openai/test", "writer.api_base={url}", "+writer.api_key={S}"],
    "name-under-sweep": ["-m", "+writer.api_key={S},{O}"],
    "header-mapping": ["+writer.extra_headers={{X-Api-Token:{S}}}"],
    "authorization-header": ["writer.model=openai/test", "+writer.extra_headers={{Authorization:'Bearer {S}'}}"],
    "url-userinfo": ["writer.model=openai/test", "writer.api_base=http://user:{S}@127.0.0.1:{port}/v1"],
    "url-userinfo-under-sweep": ["-m", "writer.model=openai/test",
                                 "writer.api_base=http://a:{S}@127.0.0.1:{port}/v1,{url}"],
    "agent-key": ["+agent.api_key={S}"],
    "judge-header": ["+judge.extra_headers={{x-api-key:{S}}}"],
    "value-only": ["writer.model=openai/test", "+writer.extra_body={{note:{S}}}"],
    "strategy-param": ["+strategy.naive.access_token={S}"],
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_secret_in_the_overrides_is_refused_before_anything_is_written(case, tmp_path, home):
    out = tmp_path / "run"
    with LoopbackServer(lifetime=60) as srv:
        port = srv.url.split(":")[2].split("/")[0]
        args = [a.format(S=SECRET, O=OTHER, url=srv.url, port=port) for a in REFUSED[case]]
        code, stdout, err = cli("run", *BASE, f"out={out}", *args, cwd=tmp_path)
        assert srv.calls == 0
    line = one_line(code, err, "overrides:", "environment")
    assert SECRET not in line and OTHER not in line and SECRET not in stdout
    assert not out.exists()
    assert files_hold(tmp_path, SECRET) == [] and files_hold(tmp_path, OTHER) == []


def test_a_secret_in_a_role_config_is_refused_naming_the_key_not_the_value():
    from omegaconf import OmegaConf

    from bench.runner.config import compose
    from bench.errors import BadInput
    from bench.runner.settings import parse

    cfg = compose(BASE)
    OmegaConf.set_struct(cfg, False)
    cfg.writer.extra_headers = {"X-Api-Token": "plain-looking-value"}
    cfg.agent.api_base = f"http://me:{SECRET}@localhost:8000/v1"
    with pytest.raises(BadInput) as exc:
        parse(cfg)
    problems = exc.value.problems
    assert any(p.startswith("writer.extra_headers.X-Api-Token: holds a secret") for p in problems)
    assert any(p.startswith("agent.api_base: holds a secret") for p in problems)
    assert all(SECRET not in p and "plain-looking-value" not in p for p in problems)


def test_config_yaml_redaction_reaches_every_depth():
    from bench.runner.config import redact

    cfg = {"overrides": [f"+writer.api_key={SECRET}", f"writer.api_base=http://u:{OTHER}@h/v1", "window=900"],
           "writer": {"api_base": f"http://u:{SECRET}@h/v1", "extra_headers": {"X-Api-Token": OTHER},
                      "max_tokens": 100},
           "sweep": [{"judge": {"extra_body": {"token": SECRET}}}]}
    text = repr(redact(cfg))
    assert SECRET not in text and OTHER not in text
    assert "window=900" in text and "'max_tokens': 100" in text and "http://u:***@h/v1" in text


class EchoingServer(LoopbackServer):
    """Fails its first calls with an error body that repeats the caller's key, as some proxies do."""

    fail_first = 3

    def answer(self, body):
        if self.calls <= self.fail_first:
            raise RuntimeError(f"upstream refused key {os.environ.get('OPENAI_API_KEY')}")
        return super().answer(body)


def test_an_environment_key_echoed_by_a_failing_server_never_reaches_disk(tmp_path, home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "run"
    with EchoingServer(lifetime=120) as srv:
        code, stdout, err = cli("run", "suite=smoke", "strategies=[naive]", "window=900", "limits.cells=1",
                                "writer.model=openai/test", f"writer.api_base={srv.url}", "writer.retries=2",
                                "writer.backoff=0.01", "probes.enabled=false", f"out={out}", cwd=tmp_path)
        assert srv.faults_served == 0 and srv.calls > 3
    assert code == 0, err
    assert "model failed" in (out / "compactions.jsonl").read_text()     # the echoed error was recorded ...
    assert SECRET not in err and SECRET not in stdout
    assert files_hold(tmp_path, SECRET) == []                            # ... scrubbed: run folder, cache, $HOME
    assert (home / ".cache" / "compaction-bench" / "responses" / "responses.sqlite").exists()


class LeakyStrategy(Strategy):
    """A strategy whose bug quotes the environment's key in its exception."""

    async def compact(self):
        raise RuntimeError(f"cannot connect with {os.environ['OPENAI_API_KEY']}")


def test_a_failing_cell_that_quotes_the_key_is_scrubbed(tmp_path, home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "run"
    code, stdout, err = cli("run", f"scenarios=[{WATCH}]", "strategies=[test_harden_1_secrets.LeakyStrategy]",
                            "probes.enabled=false", f"out={out}", cwd=tmp_path)
    assert code == 1 and "cannot connect with ***" in err and SECRET not in err + stdout
    assert (out / "errors.jsonl").exists() and files_hold(tmp_path, SECRET) == []
