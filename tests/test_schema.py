"""The scenario schema is the one declaration of the file format: it names every field of the model's
dataclasses. The docs' format table is generated from it, and the docs' examples use only its keys
(tests/test_docs.py)."""
from __future__ import annotations

import dataclasses

from bench.scenarios.schema import RECORDS, SCENARIO, TYPES


def test_every_dataclass_field_has_its_key():
    for rec in RECORDS:
        names = {f.name for f in rec.fields if f.name}
        fields = {f.name for f in dataclasses.fields(rec.cls)} - ({"path"} if rec is SCENARIO else set())
        assert names == fields, rec.name
        assert all(f.type in TYPES for f in rec.fields), rec.name
