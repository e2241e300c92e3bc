"""Skill documents an agent loads mid-session (DESIGN §4: skills travel with the checkpoint).

A skill is long, instruction-like text; strategies must carry recently loaded
ones, so the scenarios load them early and reload some later.
"""
from __future__ import annotations

import random

from bench.scenarios.generators import content as C

RULES = {
    "code-review": (
        "Read the whole diff before commenting; comment on behaviour, not style the linter already enforces.",
        "A PR that changes a public API needs a changelog entry and a version note.",
        "Request changes when CI fails for a reason the PR caused; re-run once when the failure is a known flake.",
        "Check that new queries are covered by an index; paste the EXPLAIN output when unsure.",
        "Never approve your own follow-up commits; ask another reviewer.",
        "Secrets, tokens and customer data must not appear in logs, fixtures or snapshots.",
    ),
    "db-migration": (
        "Every cutover starts with replication lag below the runbook threshold for ten minutes.",
        "Take a fresh snapshot before switching writes; record its id in the change ticket.",
        "Switch reads first, watch for fifteen minutes, then switch writes.",
        "Keep the old cluster writable until the service has been stable on the new one for 24 hours.",
        "Schema changes never ride along with a cutover.",
        "A rollback restores the previous connection string and replays the write log from the snapshot.",
    ),
    "incident-debugging": (
        "Write down every hypothesis with the evidence for and against it before changing code.",
        "Reproduce first; a fix without a reproduction is a guess.",
        "Keep the exact error text and the first line that mentions our code.",
        "Bisect when the regression window has more than five commits.",
        "Do not restart a crashing pod before capturing its logs with --previous.",
        "Linter warnings in files on the crash path are leads, not noise.",
    ),
}


def skill_text(rng: random.Random, name: str, scale: float = 1.0) -> str:
    rules = RULES[name]
    out = [f"---\nname: {name}\nversion: {rng.randint(1, 4)}.{rng.randint(0, 12)}\n---", f"# Skill: {name}", "", "## Rules"]
    out += [f"{i}. {r}" for i, r in enumerate(rules, 1)]
    out += ["", "## Checklist"]
    for _ in range(max(4, int(18 * scale))):
        out.append(f"- [ ] {rng.choice(C.VERBS)} the {rng.choice(C.NOUNS)} path: {C.filler_paragraph(rng, rng.choice(C.NOUNS))}")
    out += ["", "## Worked example", "```", C.diff(rng, C.path(rng, "ts"), "ts", max(1, int(3 * scale))), "```"]
    return "\n".join(out)
