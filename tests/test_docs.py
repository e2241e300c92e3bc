"""The docs say what the code declares: every generated block is what its generator writes now, and the
hand-written reference tables name exactly the fields, columns and folders the code has.

    python tests/test_docs.py --write     rewrites every generated block (after a metric, a command, a
                                          scenario key or a results column changed)

A generated block sits between `<!-- generated: NAME -->` and `<!-- generated: end -->`; BLOCKS says which
file holds which block and what writes it.
"""
from __future__ import annotations

import ast
import asyncio
import dataclasses
import io
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SRC = ROOT / "src" / "bench"


# ------------------------------------------------------------------ the generators


def metrics_table() -> str:
    from bench.scoring.metrics import docs_table

    return docs_table()


def schema_table() -> str:
    from bench.scenarios.schema import markdown

    return markdown().rstrip("\n")


def commands() -> str:
    """What `compaction-bench --help` prints: the COMMANDS table's synopses and the exit codes."""
    from bench.cli import USAGE

    return "```\n" + USAGE.rstrip("\n") + "\n```"


def columns() -> str:
    from bench.results.store import SCENARIO_COLUMNS, SUMMARY_COLUMNS
    from bench.scoring import CHECK_COLUMNS

    def names(cols: list[str]) -> str:
        return ", ".join(f"`{c}`" for c in cols)

    return "\n".join([f"- `summary.csv`: {names(SUMMARY_COLUMNS)}", f"- `checks.csv`: {names(CHECK_COLUMNS)}",
                      f"- `scenarios.csv`: {names(SCENARIO_COLUMNS)}"])


def gate() -> str:
    """The gate's default directions and thresholds, from the metric registry."""
    from bench.gate.thresholds import DEFAULT_MAX_DROP
    from bench.scoring import metrics as M

    rows = ["| metric | worse when | default threshold |", "|---|---|---|"]
    for c in M.GATED:
        worse = "it drops" if M.higher_is_better(c) else "it rises"
        if c in M.COUNTS:
            limit = "0: any rise fails"
        elif c in M.OPTIONAL:
            limit = "none: gated only when a gate names it" + \
                ("; relative (0.1: ten percent dearer)" if c in M.RELATIVE else "")
        else:
            limit = f"`max_drop` ({DEFAULT_MAX_DROP:g})"
        rows.append(f"| `{c}` | {worse} | {limit} |")
    return "\n".join(rows)


def library() -> str:
    """docs/scenarios.md's table of the bundled library, read from the files and the generators' specs (each
    file's size in tokens is `scenarios list`'s, through its row cache), so it never drifts from them."""
    from bench.cli.scenarios import _load_cache, _save_cache, list_row
    from bench.scenarios.generators import DEFAULT_OUT, LIBRARY

    cache = _load_cache()
    rows, total, size, ratio = [], 0, 0, None
    for name, spec in LIBRARY.items():
        path = DEFAULT_OUT / f"{name}.json"
        row = list_row(path, cache)
        probes = len(json.loads(path.read_text(encoding="utf-8")).get("probes") or [])
        total, size = total + row["tokens"], size + path.stat().st_size
        ratio = min(ratio or row["tokens"] / row["window"], row["tokens"] / row["window"])
        rows.append(f"| `{name}` | {row['window'] // 1000}k | {row['events']} | {row['tokens']:,} | {probes} | "
                    f"{', '.join(row['tags'])} | {spec.tests} |")
    _save_cache(cache)
    return "\n".join(["| id | window | events | tokens | probes | tags | failure mode |", "|---|---|---|---|---|---|---|",
                      *rows, "", f"Total {total / 1e6:.2f}M tokens, {size / 1e6:.0f} MB. Every scenario is at least "
                      f"{int(ratio)}x its window."])


# (file, block name) -> its generator
BLOCKS = {
    ("README.md", "metrics"): metrics_table,
    ("README.md", "commands"): commands,
    ("docs/reference.md", "commands"): commands,
    ("docs/reference.md", "columns"): columns,
    ("docs/scoring.md", "gate"): gate,
    ("docs/scenarios.md", "schema"): schema_table,
    ("docs/scenarios.md", "library"): library,
}
END = "<!-- generated: end -->"


def _split(text: str, name: str, where: str) -> tuple[str, str, str]:
    begin = f"<!-- generated: {name} -->\n"
    assert text.count(begin) == 1, f"{where}: expected one '{begin.strip()}' marker"
    head, rest = text.split(begin, 1)
    assert END in rest, f"{where}: the generated block '{name}' has no '{END}'"
    body, tail = rest.split(END, 1)
    return head + begin, body, END + tail


def write_all() -> list[str]:
    changed = []
    for (file, name), make in BLOCKS.items():
        path = ROOT / file
        text = path.read_text(encoding="utf-8")
        head, body, tail = _split(text, name, file)
        new = head + make() + "\n" + tail
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(f"{file}: {name}")
    return changed


@pytest.mark.parametrize("file, name", list(BLOCKS), ids=[f"{f}:{n}" for f, n in BLOCKS])
def test_every_generated_block_is_what_its_generator_writes(file, name):
    _, body, _ = _split((ROOT / file).read_text(encoding="utf-8"), name, file)
    assert body.strip() == BLOCKS[file, name]().strip(), \
        f"{file}'s generated block '{name}' is out of date: python tests/test_docs.py --write"


# ------------------------------------------------------------------ hand-written text held to the code


def _prose(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def _names(text: str) -> list[str]:
    return re.findall(r"[a-z_]+", text)


def _table(text: str, after: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table after the text `after`."""
    assert after in text, f"the docs lost the text {after!r}"
    lines = text.split(after, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows


def _ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_the_scoring_docs_metric_table_is_the_registry():
    from bench.scoring import metrics as M

    text = (DOCS / "scoring.md").read_text(encoding="utf-8")
    table = text.split("| metric (checks.csv) | summary column |", 1)[1].split("\n\n", 1)[0]
    pairs = dict(re.findall(r"^\| (\w+) \| (\w+) \|", table, re.M))
    assert pairs == {m.name: m.column for m in M.METRICS if m.name}


def test_every_metric_is_defined_in_full():
    from bench.scoring import metrics as M

    text = (DOCS / "scoring.md").read_text(encoding="utf-8").split("### Each metric in full", 1)[1]
    defined = re.findall(r"^- \*\*(\w+)\*\*", text.split("\n## ", 1)[0].split("**Whose words.**", 1)[0], re.M)
    assert sorted(defined) == sorted(m.column for m in M.METRICS if m.name and m.name != "probe")


def test_the_readmes_gate_bullet_is_the_registry():
    from bench.scoring import metrics as M

    text = _prose(ROOT / "README.md")
    rise = re.search(r"a rise of (.*?); any rise of (.*?)\.", text)
    assert rise and _names(rise[1]) == M.LOWER and _names(rise[2]) == M.COUNTS
    named = re.search(r"`(\w+)` \(relative\) and `(\w+)` are gated only when named", text)
    assert named and set(named.groups()) == set(M.OPTIONAL) and named[1] in M.RELATIVE


def test_the_reference_names_every_summary_column_the_registry_does_not():
    from bench.results.store import SUMMARY_COLUMNS
    from bench.scoring.metrics import COLUMNS

    rows = _table((DOCS / "reference.md").read_text(encoding="utf-8"), "each means, [scoring.md]")
    named = [c for row in rows for c in _ticked(row[0])]
    assert named == [c for c in SUMMARY_COLUMNS if c not in COLUMNS]


def _walk(node, rec, where: str) -> list[str]:
    """Keys of `node` that `rec` does not have (an example's `...` placeholders aside)."""
    if not isinstance(node, dict):
        return []
    keys = {f.key: f for f in rec.fields}
    bad = [f"{where}{k}" for k in node if k not in keys and k != "..."]
    for k, v in node.items():
        f = keys.get(k)
        if f is None or f.of is None:
            continue
        for item in (v if isinstance(v, list) else [v]) if f.type == "list" else [v]:
            bad += _walk(item, f.of, f"{where}{k}.")
    return bad


def test_the_format_examples_use_only_schema_keys():
    from bench.scenarios.schema import SCENARIO

    section = (DOCS / "scenarios.md").read_text(encoding="utf-8").split("## The format", 1)[1]
    section = section.split("### Key by key", 1)[0]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    assert len(blocks) >= 3
    for block in blocks:
        assert _walk(yaml.safe_load(block), SCENARIO, "") == []


# ------------------------------------------------------------------ the external protocol


PROTOCOL = DOCS / "protocol.md"


def _fields(rows: list[list[str]]) -> dict[str, list[str]]:
    """A `type | field | meaning` table as {type: [fields]} (a row with no type continues the last one)."""
    out: dict[str, list[str]] = {}
    kind = ""
    for row in rows:
        kind = (_ticked(row[0]) or [kind])[0]
        out.setdefault(kind, []).extend(_ticked(row[1])[:1])
    return out


def _protocol() -> dict[str, object]:
    text = PROTOCOL.read_text(encoding="utf-8")
    refused = re.search(r"refused in `fields`: (.*?)\.\n", text, re.S)
    assert refused, "protocol.md lost the sentence that lists the compaction record's own keys"
    return {
        "to_process": _fields(_table(text, "### Bench to process")),
        "add": [_ticked(r[0])[0] for r in _table(text, "A recorded message in `add`")],
        "to_bench": _fields(_table(text, "### Process to bench")),
        "written": [_ticked(r[0])[0] for r in _table(text, "A written message (")],
        "compaction": [_ticked(r[0])[0] for r in _table(text, "`compaction` is present when")],
        "refused": _ticked(refused[1]),
    }


def test_the_protocol_tables_name_the_declared_fields():
    from bench.harness.record import KEYS
    from bench.harness.strategy import Compaction
    from bench.strategies.exec import protocol as P

    doc = _protocol()
    session = SimpleNamespace(scenario="s", user="u", window=1, limit=1, reserve_output=1, margin=1,
                              tok=SimpleNamespace(encoding_name="o200k_base"),
                              system=SimpleNamespace(id="system", text="", tokens=0))
    assert doc["to_process"]["begin"] == [k for k in P.begin(session) if k != "type"]
    assert doc["add"] == list(P.ADD)
    # a written message: the record's keys, less what the bench works out itself or never takes from it
    assert doc["written"] == [k for k in KEYS if k not in ("tokens", "hash", "skill")]
    assert doc["compaction"] == [f.name for f in dataclasses.fields(Compaction)]
    assert doc["refused"] == sorted(P.HARNESS_KEYS)


def _read_keys() -> set[str]:
    """String keys the exec strategy reads from what a process sends: `x.get("k")` and `x["k"]`."""
    keys = set()
    for name in ("strategy.py", "protocol.py"):
        for node in ast.walk(ast.parse((SRC / "strategies" / "exec" / name).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get" and node.args \
                    and isinstance(node.args[0], ast.Constant):
                keys.add(node.args[0].value)
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                    and isinstance(node.slice.value, str):
                keys.add(node.slice.value)
    return keys


def test_every_field_a_process_may_send_is_one_the_bench_reads():
    doc = _protocol()
    read = _read_keys()
    sent = {f for fields in doc["to_bench"].values() for f in fields}
    assert sent - read == set(), "protocol.md names fields the bench never reads"
    # a written message is read by bench.harness.record.from_json, the compaction report as a Compaction
    # (both held to their declarations above)
    assert {"type", "version", "keep", "messages", "texts", "limit", "wake_above", "compaction"} <= read


@pytest.fixture(scope="module")
def exchange():
    """Every line of a real exchange: the Python worked example on a smoke scenario, offline writer."""
    from bench import HOME
    from bench.harness.replay import ReplayOptions, replay
    from bench.models.offline import OfflineModel
    from bench.scenarios import loader
    from bench.strategies.exec import Exec, protocol as P
    from bench.strategies.exec.process import Child
    from bench.tokens import tokenizer

    seen: list[tuple[str, dict]] = []
    send_raw, close, decode = Child.send_raw, Child.close, P.decode

    async def sent(self, data: bytes) -> None:
        seen.append((">", json.loads(data)))
        await send_raw(self, data)

    async def closed(self, goodbye) -> None:
        if goodbye is not None:
            seen.append((">", goodbye))
        await close(self, goodbye)

    def received(line: bytes) -> dict:
        obj = decode(line)
        seen.append(("<", obj))
        return obj

    s = loader.load(HOME / "scenarios" / "hand" / "injected-watch.yaml")
    strategy = Exec([sys.executable, str(HOME / "examples" / "external" / "naive.py")])
    strategy.name = "naive_py"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Child, "send_raw", sent)
        mp.setattr(Child, "close", closed)
        mp.setattr(P, "decode", received)
        asyncio.run(replay(s, strategy, OfflineModel(), tokenizer(), ReplayOptions(window=s.window), io.StringIO(),
                           io.StringIO(), "cell"))
    return seen


def test_a_real_exchange_uses_exactly_the_documented_messages_and_fields(exchange):
    doc = _protocol()
    to_process: dict[str, set[str]] = {}
    for way, obj in exchange:
        if way == ">":
            to_process.setdefault(obj["type"], set()).update(k for k in obj if k != "type")
            for m in obj.get("add", ()):
                assert set(m) <= set(doc["add"]), m
        else:
            allowed = set(doc["to_bench"].get(obj["type"], ())) | ({"name"} if obj["type"] == "hello" else set())
            assert set(obj) - {"type"} <= allowed, obj
            for m in obj.get("messages", ()):
                assert not isinstance(m, dict) or set(m) <= set(doc["written"]), m
            assert set(obj.get("compaction") or {}) <= set(doc["compaction"]), obj
    # the example compacts, counts with a limit and says wake_above: every field of these messages shows
    assert {k: sorted(v) for k, v in to_process.items()} == \
        {k: sorted(v) for k, v in doc["to_process"].items()}


# ------------------------------------------------------------------ the map and the paths


def test_the_design_map_lists_every_folder_in_data_flow_order():
    from test_layers import RANKS

    design = (DOCS / "design.md").read_text(encoding="utf-8")
    block = design.split("## 1. Map", 1)[1].split("```", 2)[1]
    listed = [name for line in block.splitlines() for name in re.findall(r"(?:^|, )(\w+)/", line.split("  ")[0])]
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert set(listed) == folders, "docs/design.md's map and src/bench/'s folders differ"
    ranked = [RANKS[f] for f in listed if f in RANKS]
    assert ranked == sorted(ranked), "the map is not in data-flow order (tests/test_layers.py's ranks)"


def test_the_design_keeps_to_its_length():
    assert len((DOCS / "design.md").read_text(encoding="utf-8").splitlines()) <= 300, \
        "docs/design.md is the rationale; put detail in the reference pages"


PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_path_and_link_in_the_docs_exists(page):
    text = page.read_text(encoding="utf-8")
    missing = []
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target and not (page.parent / target).exists():
            missing.append(target)
    for path in re.findall(r"`((?:src|tests|docs)/[^`\s]+)`", text):
        path = path.rstrip(".,:;")
        if not re.search(r"[<>*{}]", path) and not (ROOT / path).exists():
            missing.append(path)
    assert not missing, f"{page.name} names paths that do not exist: {missing}"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    done = write_all()
    print("\n".join(f"rewrote {c}" for c in done) or "every generated block is up to date")
