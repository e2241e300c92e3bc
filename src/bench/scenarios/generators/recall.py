"""A detail to recall after a long debugging stretch: the bar.ts warning.

Early on, a lint run shows a warning the user asks to come back to; then a long
crash hunt (stack traces, logs, bisect) fills several windows. Rewrite
summaries keep "fixed the crash" and drop the warning, the bisected commit and
the exact error text.
"""
from __future__ import annotations

from bench.scenarios.generators import content as C
from bench.scenarios.generators.builder import Script, begin
from bench.scenarios.generators.queue import pad, run
from bench.scenarios.generators.skills import skill_text

SYSTEM = """You are a debugging agent in the acme/edge repository (TypeScript proxy), working for {user}.
Tools: run, read, edit, git, load_skill.
Background messages carry a [Harness: <source>] first line."""

HYPOTHESES = ("connection pool exhaustion under burst", "a race in the TLS session cache", "the keep-alive timer firing after close",
              "a stale DNS entry for the upstream", "header parsing on chunked responses", "the retry middleware double-sending",
              "a memory leak in the metrics labels", "backpressure ignored in the stream pipe")


def build(sid: str, title: str, window: int, target: int, seed: int, tags: list[str]) -> Script:
    s = begin(sid, title, window, seed, tags, ("Kai", "Marta", "Dev", "Sunita"), SYSTEM)
    rng, user = s.rng, s.user_name
    scale = s.scale
    line = rng.randint(60, 140)
    u1 = s.user("The edge proxy crashes a few times an hour in prod with ECONNRESET storms and then a segfault in the native TLS binding. "
                "Find the cause and fix it. Run the linter first so we know the baseline.", dt=0)
    s.mission("m-crash", u1, "find and fix the edge proxy crash", ["edge proxy crashes", "segfault"])
    s.act("Loading the incident-debugging skill.", "load_skill", {"name": "incident-debugging"},
          skill_text(rng, "incident-debugging", scale), skill="incident-debugging")
    warn = f"src/net/bar.ts:{line}:7  warning  'retries' is reassigned inside the loop, so the backoff never grows  no-param-reassign"
    lint_lines = [f"{C.path(rng, 'ts')}:{rng.randint(5, 300)}:{rng.randint(2, 30)}  warning  {rng.choice(('Unexpected any', 'Missing return type', 'Prefer const'))}  @typescript-eslint/{rng.choice(('no-explicit-any', 'explicit-function-return-type', 'prefer-const'))}"
                  for _ in range(max(6, int(30 * scale)))]
    lint_lines.insert(len(lint_lines) // 2, warn)
    _, lint = s.act("Running the linter for a baseline.", "run", {"cmd": "npx eslint src --max-warnings=1000"},
                    "\n".join(lint_lines) + f"\n\n✖ {len(lint_lines)} problems (0 errors, {len(lint_lines)} warnings)")
    s.fact("f-bar", lint, [f"bar.ts:{line}", "backoff never grows"])
    u2 = s.user(f"Note the bar.ts:{line} warning about retries, that looks like a real bug. We'll come back to it after the crash is fixed; "
                f"don't touch bar.ts before then.")
    s.constraint("c-bar-later", u2, "must", "We'll come back to it after the crash is fixed", ["after the crash is fixed"])
    s.constraint("c-bar-ban", u2, "ban", "don't touch bar.ts before then", ["touch bar.ts"])
    bad = C.sha(rng, 9)
    errno = f"ERR_SSL_{rng.choice(('DECRYPTION_FAILED', 'BAD_RECORD_MAC', 'WRONG_VERSION_NUMBER'))}"

    def hunt(i: int, hyp: str, budget: int) -> str:
        s.say(f"Next hypothesis ({i + 1} of {len(hyps)}): {hyp}.")

        def evidence() -> None:
            pick = rng.random()
            if pick < 0.4:
                s.act("Pulling crash logs.", "run", {"cmd": "kubectl logs deploy/edge --previous --tail=400"},
                      C.app_log(rng, "edge", max(20, int(120 * scale))) + "\n" + C.stack_trace(rng, "ts", frames=10))
            elif pick < 0.7:
                s.act("Load test against staging.", "run", {"cmd": "k6 run load/burst.js --vus 400"},
                      C.metrics_table(rng, "edge-staging", max(10, int(50 * scale)), spike=(rng.randint(5, 20), 4.0)))
            else:
                s.act("Reading the suspect code.", "read", {"path": C.path(rng, "ts")}, C.diff(rng, C.path(rng, "ts"), "ts", max(2, int(6 * scale))))
        evidence()
        pad(s, budget - 300, evidence, most=12)
        if i == bisect_i:
            _, r = s.act("Bisecting the regression window.", "git", {"args": ["bisect", "run", "npm run repro:tls"]},
                         f"{bad} is the first bad commit\ncommit {bad}\nAuthor: {rng.choice(C.PEOPLE)}\n\n    Reuse TLS sessions across upstream pools\n\n"
                         f" src/tls/session_cache.ts | 48 ++++++---\n 1 file changed")
            s.fact("f-bisect", r, [bad, "first bad commit"])
            _, r2 = s.act("Reproducing with the bad commit.", "run", {"cmd": "npm run repro:tls"},
                          f"Error: {errno}: decryption failed or bad record mac\n" + C.stack_trace(rng, "ts", frames=6))
            s.fact("f-errno", r2, [errno, "decryption failed or bad record mac"])
            after = f" Next: {hyps[i + 1]}, the last open hypothesis, to rule out a second cause." if i + 1 < len(hyps) else ""
            return s.say(f"Confirmed: {hyp} is the cause, introduced by {bad}; it fails with {errno}.{after}")
        return s.say(f"Ruled out: {hyp}.")

    hyps = list(HYPOTHESES)
    bisect_i = len(hyps) - 2
    listed = s.say("Open hypotheses, in the order I will test them: " + "; ".join(f"{k}) {h}" for k, h in enumerate(hyps, 1)) + ".")
    done = run(s, hyps, hunt, target - 2500, probes=2, noun="hypothesis", why="the list of open hypotheses")
    s.workstream("w-hypotheses", listed, "crash hypotheses", done)
    fix, _ = s.act("Fixing: separate TLS session caches per upstream pool.", "edit", {"path": "src/tls/session_cache.ts"},
                   "Edited src/tls/session_cache.ts (22 lines)")
    s.act("Burst test after the fix.", "run", {"cmd": "k6 run load/burst.js --vus 400"}, C.metrics_table(rng, "edge-staging", 20))
    crash_done = s.say("The crash is fixed: no ECONNRESET storms or segfaults in 30 minutes of burst load.")
    s.probe("p-bar", crash_done, "recall", "Before the crash hunt we set aside a linter warning. Which one, exactly?",
            [f"bar.ts:{line}"], [], f"The no-param-reassign warning at src/net/bar.ts:{line}: 'retries' reassigned so the backoff never grows.")
    s.probe("p-bisect", crash_done, "recall", "Which commit introduced the crash, and what error did the repro show?", [bad], [],
            f"Commit {bad} (TLS session reuse across pools); {errno}.")
    u3 = s.user("Great work. Now the warning from this morning, fix that one too.")
    s.act(f"Fixing bar.ts:{line}: keep the attempt counter separate so the backoff grows.", "edit", {"path": "src/net/bar.ts"},
          "Edited src/net/bar.ts (5 lines)")
    s.say("Done: the backoff now doubles per attempt; lint is clean for bar.ts.")
    s.probe("p-which", u3, "artifact", "Which file and line are you about to change?", [f"bar.ts:{line}"], ["session_cache.ts"],
            f"src/net/bar.ts line {line}.")
    return s
