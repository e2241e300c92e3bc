"""Issue 16, class 3: no traceback on input. Numbers past Python's 4,300-digit limit, nesting past the
stack, integers too large for a float, odd YAML types: in `scenarios validate`, `run`, the importers and
`report`, each is one line naming the file (and line) and exit 2; a report that cannot be written ends
a run with exit 1 and one line, after its cells are stored."""
from __future__ import annotations

import json
import shutil

import pytest
import yaml

from harden import WATCH, cli, one_line, scenario

DIGITS = "9" * 5000
TEXT = WATCH.read_text()
ARGS = 'args: {cmd: "npm test -- checkout --repeat 20"}'


def json_text(**changes) -> str:
    return json.dumps(scenario(**changes), indent=1)


def deep(n: int, open_: str = "[", close: str = "]") -> str:
    return open_ * n + close * n


def with_args(value: str) -> str:
    """injected-watch as JSON with the first call's args replaced by raw JSON text."""
    return json_text().replace('"cmd": "npm test -- checkout --repeat 20"', f'"v": {value}', 1)


VALIDATE = {   # name: (suffix, text, what the one line says)
    "json-window-5000-digits": (".json", json_text().replace('"window": 4500', f'"window": {DIGITS}'), "4,300 digits"),
    "yaml-window-5000-digits": (".yaml", TEXT.replace("window: 4500", f"window: {DIGITS}"), "4,300 digits"),
    "json-args-5000-digits": (".json", with_args(DIGITS), "4,300 digits"),
    "yaml-args-5000-digits": (".yaml", TEXT.replace(ARGS, f"args: {{n: {DIGITS}}}"), "4,300 digits"),
    "json-document-1000-deep": (".json", '{"scenario": 1, "events": ' + deep(1000) + "}", "nested more than 64"),
    "json-args-1000-deep": (".json", with_args(deep(1000)), "nested more than 64"),
    "json-args-100-deep": (".json", with_args(deep(100)), "nested more than 64"),
    "json-args-100-deep-objects": (".json", with_args('{"a": ' * 100 + "1" + "}" * 100), "nested more than 64"),
    "yaml-args-100-deep": (".yaml", TEXT.replace(ARGS, "args: {v: " + deep(100) + "}"), "nested more than 64"),
    "yaml-args-2000-deep": (".yaml", TEXT.replace(ARGS, "args: {v: " + deep(2000) + "}"), "nesting depth"),
    "json-t-too-big-for-a-float": (".json", json_text().replace('"t": 0', f'"t": {"9" * 401}', 1), "finite number"),
    "json-t-1e999": (".json", json_text().replace('"t": 0', '"t": 1e999', 1), "finite number"),
    "json-window-1e400": (".json", json_text().replace('"window": 4500', '"window": 1e400'), "must be an integer"),
    "json-window-10^30": (".json", json_text().replace('"window": 4500', f'"window": {10 ** 30}'), "up to 100,000,000"),
    "json-args-nan": (".json", with_args("NaN"), "args must be plain JSON"),
    "yaml-t-inf": (".yaml", TEXT.replace("t: 0,", "t: .inf,", 1), "finite number"),
    "yaml-binary-window": (".yaml", TEXT.replace("window: 4500", "window: !!binary aGVsbG8="), "must be an integer"),
    "yaml-date-t": (".yaml", TEXT.replace("t: 0,", "t: 2024-01-01,", 1), "must be a number"),
    "yaml-python-tag": (".yaml", TEXT.replace("window: 4500", "window: !!python/object:os.system {}"), "syntax error"),
    "json-raw-control-character": (".json", json_text().replace("Fix the three", "Fix\u0000the three", 1),
                                   "syntax error"),
    "not-utf-8": (".yaml", None, "not UTF-8"),
}


@pytest.mark.parametrize("name", list(VALIDATE))
def test_validate_one_line_no_traceback(tmp_path, name):
    suffix, text, says = VALIDATE[name]
    path = tmp_path / f"s{suffix}"
    if text is None:
        path.write_bytes(TEXT.encode().replace(b"Priya", b"Pr\xffiya", 1))
    else:
        path.write_text(text, encoding="utf-8")
    line = one_line(*cli("scenarios", "validate", str(path))[::2], str(path))
    assert says in line, line


@pytest.mark.parametrize("name", ["json-args-5000-digits", "json-document-1000-deep", "json-t-too-big-for-a-float",
                                  "json-args-100-deep"])
def test_run_one_line_no_traceback(tmp_path, name):
    suffix, text, says = VALIDATE[name]
    path = tmp_path / f"s{suffix}"
    path.write_text(text, encoding="utf-8")
    line = one_line(*cli("run", f"scenarios=[{path}]", "strategies=[truncate]", f"out={tmp_path / 'r'}")[::2],
                    str(path))
    assert says in line and not (tmp_path / "r" / "summary.csv").exists()


USER = {"role": "user", "content": "Fix the build please, and never touch main."}


def chat(arguments: str) -> list:
    return [USER, {"role": "assistant", "content": "Running.", "tool_calls": [
        {"id": "c1", "function": {"name": "run", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}, {"role": "assistant", "content": "Done."}]


def claude(tool_input) -> str:
    lines = [{"type": "user", "message": {"role": "user", "content": "Fix the build please."}},
             {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
                 {"type": "tool_use", "id": "t1", "name": "Bash", "input": tool_input}]}},
             {"type": "user", "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
             {"type": "assistant", "message": {"id": "m2", "role": "assistant", "content": [{"type": "text",
                                                                                            "text": "Done."}]}}]
    return "\n".join(json.dumps(x) for x in lines)


def nested(n: int):
    v: object = 1
    for _ in range(n):
        v = {"a": v}
    return v


IMPORTS = {   # name: (format, file name, text, exit, what the one line says)
    "json-5000-digits": ("openai-chat", "t.json", json.dumps([USER]).replace("]", f", {DIGITS}]"), 2, "4,300 digits"),
    "jsonl-5000-digits": ("openai-chat", "t.jsonl", json.dumps(USER) + f"\n{DIGITS}\n", 2, "4,300 digits"),
    "arguments-1000-deep": ("openai-chat", "t.json", json.dumps(chat(deep(1000))), 0, ""),
    "arguments-5000-digits": ("openai-chat", "t.json", json.dumps(chat('{"n": ' + DIGITS + "}")), 0, ""),
    "claude-input-100-deep": ("claude-code", "t.jsonl", claude(nested(100)), 2, "nested more than 64"),
    "swe-agent-5000-digits": ("swe-agent", "t.traj", '{"history": [], "n": ' + DIGITS + "}", 2, "4,300 digits"),
    "document-100000-deep": ("openai-chat", "t.json", deep(100_000), 2, "nested too deeply"),
}


@pytest.mark.parametrize("name", list(IMPORTS))
def test_import_one_line_no_traceback(tmp_path, name):
    fmt, file, text, want, says = IMPORTS[name]
    src, out = tmp_path / file, tmp_path / "out.json"
    src.write_text(text)
    code, stdout, err = cli("import", fmt, str(src), "--out", str(out))
    if want == 0:
        assert code == 0 and "wrote" in stdout, err
        assert cli("scenarios", "validate", str(out))[0] == 0     # what it wrote is a valid scenario
    else:
        assert says in one_line(code, err, str(src))
        assert not out.exists()


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("base") / "run"
    code, _, err = cli("run", "suite=smoke", "strategies=[truncate,naive]", "probes.enabled=false", f"out={out}")
    assert code == 0, err
    return out


def copy_of(finished, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    return out


def test_report_on_a_summary_row_cut_midway(finished, tmp_path):
    out = copy_of(finished, tmp_path)
    text = (out / "summary.csv").read_text()
    (out / "summary.csv").write_text(text[:text.rindex("\n", 0, len(text) - 1) + 40])
    last = len(text.splitlines())
    line = one_line(*cli("report", str(out))[::2], f"summary.csv line {last}: incomplete row")
    assert f"out={out}" in line


@pytest.mark.parametrize("field, value", [("repairs", "two"), ("repairs", [1]), ("fallback", {"kind": "x"}),
                                          ("fallback", 7), ("ok", "yes"), ("strategy", None)])
def test_report_survives_odd_values_in_compactions_jsonl(finished, tmp_path, field, value):
    out = copy_of(finished, tmp_path)
    lines = (out / "compactions.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec[field] = value
    (out / "compactions.jsonl").write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    code, stdout, err = cli("report", str(out))
    assert code == 0 and "report:" in stdout, err


@pytest.mark.parametrize("blocker", ["figures", "report.html", "report.md"])
def test_report_that_cannot_be_written(finished, tmp_path, blocker):
    out = copy_of(finished, tmp_path)
    target = out / blocker
    shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)
    target.write_text("x") if blocker == "figures" else target.mkdir()
    one_line(*cli("report", "--figures", str(out))[::2], blocker, "cannot write the report")


def test_a_run_whose_report_cannot_be_written_keeps_its_cells_and_exits_1(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "figures").write_text("not a folder")
    code, stdout, err = cli("run", "suite=smoke", "strategies=[truncate]", "probes.enabled=false", "report.figures=true",
                            f"out={out}")
    assert code == 1, err
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "report not written" in errors[0] and "figures" in errors[0]
    assert len((out / "summary.csv").read_text().splitlines()) == 4          # header + 3 cells, all stored


def test_yaml_module_is_not_what_checks_aliases():
    """The loader's own YAML reader, not a library default, is what every scenario goes through."""
    from bench import parsing

    with pytest.raises(yaml.YAMLError):
        yaml.load("a: &x 1\nb: *x\n", Loader=parsing._Loader)
