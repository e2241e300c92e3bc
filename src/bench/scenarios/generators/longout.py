"""Skill loads and long tool outputs that dwarf the conversation.

A log investigation where single outputs run to a large share of the window
(full pod logs, table dumps, a heap summary), a few skills are loaded and one
reloaded, and the facts that matter are single lines inside the huge outputs.
The user's words are a tiny fraction of the tokens, which is exactly when
rewrite summaries lose them.
"""
from __future__ import annotations

from bench.scenarios.generators import content as C
from bench.scenarios.generators.builder import Script, begin
from bench.scenarios.generators.queue import pad, run
from bench.scenarios.generators.skills import skill_text

SYSTEM = """You are a data-platform agent for acme, working for {user} on the nightly export pipeline.
Tools: run, read, sql, load_skill.
Background messages carry a [Harness: <source>] first line."""

STAGES = ("extract-orders", "extract-customers", "join-ledger", "dedupe", "currency-normalize", "partition-write",
          "manifest", "upload-s3", "notify-partners")


def build(sid: str, title: str, window: int, target: int, seed: int, tags: list[str]) -> Script:
    s = begin(sid, title, window, seed, tags, ("Greta", "Samir", "Olu", "Mina"), SYSTEM)
    rng, user = s.rng, s.user_name
    big = max(200, int(window * 0.18 / 26))   # lines per huge log: about a fifth of the window
    u1 = s.user(f"Last night's partner export produced {rng.randint(3, 9)}% fewer rows than the night before. Walk the pipeline "
                f"stage by stage ({', '.join(STAGES)}) and find where rows go missing. Read-only: do not re-run any stage against "
                f"production, use the staging replica. Report to me only when you have the stage and the cause.", dt=0)
    s.mission("m-rows", u1, "find the pipeline stage and cause of the missing export rows", ["fewer rows"])
    s.constraint("c-readonly", u1, "ban", "do not re-run any stage against production, use the staging replica", ["staging replica"])
    s.constraint("c-report", u1, "reporting", "Report to me only when you have the stage and the cause", ["stage and the cause"])
    for name in ("incident-debugging", "db-migration"):
        s.act(f"Loading the {name} skill.", "load_skill", {"name": name}, skill_text(rng, name, window / 64000), skill=name)
    culprit = STAGES.index("dedupe")
    key = f"dedupe_key=(customer_id, order_day) collapsed {rng.randint(1200, 9000)} rows"

    def inspect(i: int, stage: str, budget: int) -> str:
        planted = {big // 2: f'{{"ts":"2026-03-14T02:11:09Z","level":"warn","svc":"{stage}","msg":"{key}"}}'} if i == culprit else {}
        _, r = s.act(f"Next stage: {stage}. Reading its full log.", "run", {"cmd": f"kubectl logs job/export-{stage} --tail=-1"},
                     C.app_log(rng, stage, big, planted))
        if planted:
            s.fact("f-dedupe", r, [key])

        def dump() -> None:
            rows = "\n".join(f"{rng.randint(10 ** 6, 10 ** 7)} | {rng.choice(C.NOUNS)} | {rng.randint(1, 99999)} | 2026-03-{rng.randint(1, 14):02d}"
                             for _ in range(big // 2))
            s.act(f"Row sample after {stage} (staging).", "sql", {"db": "staging-replica", "query": f"select * from export_{stage.replace('-', '_')} limit {big // 2}"},
                  f"id | kind | amount_cents | day\n{rows}")
        pad(s, budget - 300, dump, most=4)
        if i == culprit + 1:
            s.act("Reloading the incident-debugging skill.", "load_skill", {"name": "incident-debugging"},
                  skill_text(rng, "incident-debugging", window / 64000), skill="incident-debugging")
        found = "row counts drop here" if i == culprit else "row counts match the previous stage"
        after = f"; next: {stages[i + 1]}" if i + 1 < len(stages) else ""
        return s.say(f"{stage} done: {found}{after}.")

    stages = list(STAGES)
    done = run(s, stages, inspect, target - 1500, probes=2, noun="stage", why="pipeline order")
    s.workstream("w-stages", u1, "pipeline stages", done)
    end = s.say(f"{user}: the rows go missing in dedupe. {key}; the key should include order_id.")
    s.probe("p-key", done[-1][1], "recall", "Which stage drops the rows, and what exactly did its log say?", ["dedupe", "collapsed"], [],
            f"dedupe; the warn line '{key}'.")
    s.probe("p-readonly", end, "constraint", "Can you re-run dedupe in production to confirm?", ["staging"], ["re-run it in production"],
            "No: read-only in production; use the staging replica.")
    return s
