"""Issue 26, secrets by name and by value: a header or env entry whose name says credential (in any
spelling: Ocp-Apim-Subscription-Key, DB_PASS, apiKey, SMTP_PW) is refused before anything runs; every
other header and env value is run but never written (config.yaml and a baseline's config.yaml show
`***`); and no error line repeats a value or the command line, however the override is broken."""
from __future__ import annotations

import sys

import pytest

from bench import HOME

from harden import WATCH, cli, files_hold, one_line
from test_harden_1_secrets import home  # noqa: F401  (fixture)

S = "hunter2-0f1e2d3c4b5a"      # a value no pattern recognises as a key: only its place says it is one
V = "plain-value-7a6b5c4d3e"
BASE = [f"scenarios=[{WATCH}]", "strategies=[truncate]", "probes.enabled=false", "stress=[]"]
TRUNCATE = (f"+strategy.ext={{_target_:bench.strategies.exec.Exec,command:[{sys.executable},"
            f"{HOME / 'examples' / 'external' / 'truncate.py'}],calls_writer:false}}")

REFUSED = {   # by the name it is given under
    "subscription-key-header": ["+writer.extra_headers={{Ocp-Apim-Subscription-Key:{S}}}"],
    "camel-case-header": ["+writer.extra_headers={{apiKey:{S}}}"],
    "auth-header-of-the-judge": ["+judge.extra_headers={{X-Auth:{S}}}"],
    "env-db-pass": ["+strategy.exec.env.DB_PASS={S}"],
    "env-mapping-smtp-pw": ["+strategy.exec.env={{SMTP_PW:{S}}}"],
    "env-credentials-file": ["+strategy.exec.env.GOOGLE_APPLICATION_CREDENTIALS={S}"],
    "strategy-param-password": ["+strategy.truncate.db_password={S}"],
    "under-sweep": ["-m", "+writer.extra_headers={{X-Api-Key:{S}}}"],
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_credential_by_name_is_refused_before_anything_runs(case, tmp_path, home):  # noqa: F811
    out = tmp_path / "run"
    code, stdout, err = cli("run", *BASE, f"out={out}", *(a.format(S=S) for a in REFUSED[case]), cwd=tmp_path)
    line = one_line(code, err, "overrides:", "environment")
    assert S not in line + stdout and not out.exists()
    assert files_hold(tmp_path, S) == []


@pytest.fixture(scope="module")
def accepted(tmp_path_factory):
    """A run given a header and an env entry whose names say nothing: used, never written."""
    tmp = tmp_path_factory.mktemp("accepted")
    out = tmp / "run"
    code, stdout, err = cli("run", f"scenarios=[{WATCH}]", "strategies=[truncate,ext]", "probes.enabled=false",
                            "stress=[]", f"out={out}", TRUNCATE, f"+strategy.ext.env.TEAM_NOTE={V}",
                            f"+writer.extra_headers={{X-Team:{V}}}", cwd=tmp)
    return tmp, out, code, stdout + err


def test_a_header_or_env_value_is_used_but_never_written(accepted):
    tmp, out, code, said = accepted
    assert code == 0, said
    assert V not in said and files_hold(tmp, V) == []
    config = (out / "config.yaml").read_text(encoding="utf-8")
    assert "+strategy.ext.env.TEAM_NOTE=***" in config and "+writer.extra_headers=***" in config
    assert "TEAM_NOTE: '***'" in config and "X-Team: '***'" in config


def test_the_redaction_rules():
    from bench.runner.config import redact, redact_override

    assert redact_override(f"+strategy.exec.env.FOO={V}") == "+strategy.exec.env.FOO=***"
    assert redact_override(f"+strategy.exec.env={{FOO:{V}}}") == "+strategy.exec.env=***"
    assert redact_override(f"+writer.extra_headers={{X-Team:{V}}}") == "+writer.extra_headers=***"
    assert redact_override(f"+strategy.x={{_target_:a.B,env:{{FOO:{V}}}}}") == "+strategy.x=***"
    assert redact_override("window=900") == "window=900" and redact_override("judge.pass_score=3") == "judge.pass_score=3"
    cfg = redact({"writer": {"extra_headers": {"X-Team": V, "X-Retries": 3}, "max_tokens": 100},
                  "strategy": {"e": {"env": {"FOO": V}, "command": ["x"], "keep_last": 2}}, "judge": {"pass_score": 4}})
    assert V not in repr(cfg) and cfg["writer"]["extra_headers"]["X-Retries"] == "***"
    assert cfg["writer"]["max_tokens"] == 100 and cfg["strategy"]["e"]["keep_last"] == 2 and cfg["judge"]["pass_score"] == 4


ECHO = {   # a broken command line: the error line names the override, never a value
    "env-value-not-an-override": ["+strategy.exec.env.FOO={V}=x)"],
    "unclosed-header-mapping": ["+writer.extra_headers={{X-Team:{V}"],
    "unclosed-env-mapping": ["+strategy.exec.env={{FOO:{V}"],
    "a-broken-one-beside-a-header": ["window=)(", "+writer.extra_headers={{X-Team:{V}}}"],
    "an-option-with-a-value": ["--api-key={V}"],
    "a-bare-word": ["{V}"],
}


@pytest.mark.parametrize("case", list(ECHO))
def test_a_broken_override_is_one_line_that_repeats_no_value(case, tmp_path):
    code, stdout, err = cli("run", *BASE, f"out={tmp_path / 'r'}", *(a.format(V=V) for a in ECHO[case]))
    line = one_line(code, err)
    assert V not in line and WATCH.name not in line, line          # nor the rest of the command line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("command", [["compare", "a", "b"], ["merge", "a", "--out", "b"], ["view", "a"]])
def test_an_unknown_option_with_a_value_is_not_repeated(command, tmp_path):
    code, _, err = cli(*command, f"--token={V}", cwd=tmp_path)
    assert code == 2 and V not in err, err


def test_a_baseline_keeps_header_and_env_values_out_of_its_config(tmp_path):
    out = tmp_path / "base"
    code, _, err = cli("baseline", *BASE, f"+writer.extra_headers={{X-Team:{V}}}", "--out", str(out))
    assert code == 0, err
    assert "+writer.extra_headers=***" in (out / "config.yaml").read_text(encoding="utf-8")
    assert files_hold(tmp_path, V) == []
