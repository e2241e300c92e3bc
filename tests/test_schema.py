"""The scenario schema is the one declaration of the file format: the docs' table is generated from it,
the design's examples use only its keys, and it names every field of the model's dataclasses."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import yaml

from bench.scenarios.schema import RECORDS, SCENARIO, TYPES, Record, markdown

DOCS = Path(__file__).resolve().parent.parent / "docs"
BEGIN, END = "<!-- schema: begin -->\n", "<!-- schema: end -->"


def test_the_docs_format_table_is_the_schemas():
    text = (DOCS / "scenarios.md").read_text(encoding="utf-8")
    assert BEGIN in text and END in text, "docs/scenarios.md lost its schema markers"
    table = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert table == markdown(), ("docs/scenarios.md's format table is out of date: replace the text between its "
                                 "schema markers with bench.scenarios.schema.markdown()")


def test_every_dataclass_field_has_its_key():
    for rec in RECORDS:
        names = {f.name for f in rec.fields if f.name}
        fields = {f.name for f in dataclasses.fields(rec.cls)} - ({"path"} if rec is SCENARIO else set())
        assert names == fields, rec.name
        assert all(f.type in TYPES for f in rec.fields), rec.name


def _walk(node, rec: Record, where: str) -> list[str]:
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


def test_the_designs_examples_use_only_schema_keys():
    design = (DOCS / "design.md").read_text(encoding="utf-8")
    section = design.split("## 2. Scenario format", 1)[1].split("\n## 3.", 1)[0]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    assert len(blocks) >= 3
    for block in blocks:
        assert _walk(yaml.safe_load(block), SCENARIO, "") == []
