"""Realistic tool output from templates plus seeded variation.

Scorers only check the planted keys, so the filler must still read like the
real thing: strategies (and LLM writers) treat a fake-looking log differently
from a CI log, and a summary of lorem ipsum is trivially short. Every function
takes the scenario's `random.Random`, so output is fixed per seed.
"""
from __future__ import annotations

import random

PEOPLE = ("amara", "bogdan", "chen-wei", "dario", "elif", "farid", "greta", "hiro", "ines", "jonas",
          "kavya", "lukas", "mei", "nikolai", "oona", "pavel", "quinn", "rosa", "sven", "tomas")
NOUNS = ("invoice", "session", "token", "cart", "order", "tenant", "webhook", "quota", "ledger", "report",
         "refund", "schedule", "payload", "cursor", "receipt", "account", "batch", "policy", "shard", "lease")
VERBS = ("load", "parse", "resolve", "sync", "apply", "render", "flush", "validate", "encode", "fetch",
         "retry", "merge", "split", "persist", "refresh", "reconcile", "prune", "emit", "claim", "expire")
ERRORS = {
    "ts": ("TypeError: Cannot read properties of undefined (reading '{n}Id')",
           "Error: connect ECONNREFUSED 10.0.{a}.{b}:5432",
           "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: {a} !== {b}",
           "RangeError: Maximum call stack size exceeded"),
    "py": ("KeyError: '{n}_id'", "psycopg2.errors.DeadlockDetected: deadlock detected",
           "AssertionError: assert {a} == {b}", "TimeoutError: {n} lock not acquired after {a}s"),
    "go": ("panic: runtime error: invalid memory address or nil pointer dereference",
           "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
           "pq: duplicate key value violates unique constraint \"{n}s_pkey\""),
}
EXT = {"ts": "ts", "py": "py", "go": "go"}


def ident(rng: random.Random) -> str:
    return rng.choice(VERBS) + rng.choice(NOUNS).capitalize()


def sha(rng: random.Random, n: int = 7) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def path(rng: random.Random, lang: str, top: str = "src") -> str:
    sub = rng.choice(("api", "core", "jobs", "db", "billing", "auth", "http", "queue", "util", "models"))
    return f"{top}/{sub}/{rng.choice(NOUNS)}_{rng.choice(VERBS)}.{EXT[lang]}"


def code_line(rng: random.Random, lang: str) -> str:
    n, f, v = rng.choice(NOUNS), ident(rng), rng.choice(NOUNS)
    k = rng.randint(2, 900)
    if lang == "py":
        return rng.choice((
            f"    {n} = self.{f.lower()}({v}, timeout={k})",
            f"    if not {n}.is_active:\n        raise {n.capitalize()}Error(f\"{n} {{{n}.id}} inactive\")",
            f"    for {v} in {n}s[:{k}]:",
            f"    log.info(\"{f} ok\", extra={{\"{n}\": {n}.id, \"ms\": elapsed}})",
            f"    return {{\"{n}\": {n}.id, \"count\": len({v}s)}}",
            f"def {f.lower()}_{n}(self, {v}_id: int, *, retries: int = {k % 7}) -> {n.capitalize()}:",
        ))
    if lang == "go":
        return rng.choice((
            f"\t{n}, err := s.{f}(ctx, {v}ID)",
            f"\tif err != nil {{\n\t\treturn nil, fmt.Errorf(\"{f.lower()} {n}: %w\", err)\n\t}}",
            f"\tfor _, {v} := range {n}s {{",
            f"\tmetrics.{f}.Observe(time.Since(start).Seconds())",
            f"func (s *{n.capitalize()}Service) {f}(ctx context.Context, id int64) (*{n.capitalize()}, error) {{",
        ))
    return rng.choice((
        f"  const {n} = await this.{f[0].lower() + f[1:]}({v}Id, {{ timeout: {k} }});",
        f"  if (!{n}) throw new NotFoundError(`{n} ${{{v}Id}} not found`);",
        f"  for (const {v} of {n}s.slice(0, {k})) {{",
        f"  logger.debug('{f} ok', {{ {n}Id: {n}.id, ms: Date.now() - start }});",
        f"  return {{ {n}: {n}.id, count: {v}s.length }};",
        f"export async function {f[0].lower() + f[1:]}({v}Id: string, retries = {k % 7}): Promise<{n.capitalize()}> {{",
    ))


def diff(rng: random.Random, file: str, lang: str, hunks: int) -> str:
    out = [f"diff --git a/{file} b/{file}", f"index {sha(rng)}..{sha(rng)} 100644", f"--- a/{file}", f"+++ b/{file}"]
    line = rng.randint(10, 60)
    for _ in range(hunks):
        ctx, minus, plus = rng.randint(2, 3), rng.randint(0, 4), rng.randint(1, 6)
        out.append(f"@@ -{line},{ctx * 2 + minus} +{line},{ctx * 2 + plus} @@ {code_line(rng, lang).strip()[:60]}")
        out += [" " + code_line(rng, lang) for _ in range(ctx)]
        out += ["-" + code_line(rng, lang) for _ in range(minus)]
        out += ["+" + code_line(rng, lang) for _ in range(plus)]
        out += [" " + code_line(rng, lang) for _ in range(ctx)]
        line += rng.randint(20, 120)
    return "\n".join(out)


def lockfile_diff(rng: random.Random, packages: int) -> str:
    """The kind of output that dwarfs a conversation: a package-lock.json churn."""
    out = ["diff --git a/package-lock.json b/package-lock.json", f"index {sha(rng)}..{sha(rng)} 100644",
           "--- a/package-lock.json", "+++ b/package-lock.json"]
    for i in range(packages):
        name = rng.choice(("@babel/", "@types/", "", "", "@aws-sdk/")) + rng.choice(VERBS) + "-" + rng.choice(NOUNS)
        old = f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}"
        new = old[:-1] + str(rng.randint(0, 9))
        out += [f"@@ -{1000 + i * 9},7 +{1000 + i * 9},7 @@", f"     \"node_modules/{name}\": {{",
                f"-      \"version\": \"{old}\",", f"+      \"version\": \"{new}\",",
                f"-      \"resolved\": \"https://registry.npmjs.org/{name}/-/{name.split('/')[-1]}-{old}.tgz\",",
                f"+      \"resolved\": \"https://registry.npmjs.org/{name}/-/{name.split('/')[-1]}-{new}.tgz\",",
                f"-      \"integrity\": \"sha512-{sha(rng, 40)}\",", f"+      \"integrity\": \"sha512-{sha(rng, 40)}\","]
    return "\n".join(out)


def stack_trace(rng: random.Random, lang: str, error: str | None = None, frames: int = 8) -> str:
    error = error or rng.choice(ERRORS[lang]).format(n=rng.choice(NOUNS), a=rng.randint(1, 250), b=rng.randint(1, 250))
    if lang == "py":
        lines = ["Traceback (most recent call last):"]
        for _ in range(frames):
            lines += [f"  File \"/app/{path(rng, 'py')}\", line {rng.randint(12, 640)}, in {ident(rng).lower()}",
                      "  " + code_line(rng, "py").split("\n")[0].strip()]
        return "\n".join(lines + [error])
    if lang == "go":
        lines = [error, "", f"goroutine {rng.randint(1, 4000)} [running]:"]
        for _ in range(frames):
            lines += [f"github.com/acme/platform/{path(rng, 'go').rsplit('.', 1)[0].replace('_', '')}.{ident(rng)}(0x{sha(rng, 10)})",
                      f"\t/build/{path(rng, 'go')}:{rng.randint(12, 640)} +0x{sha(rng, 3)}"]
        return "\n".join(lines)
    lines = [error]
    for _ in range(frames):
        lines.append(f"    at {ident(rng)} (/app/{path(rng, 'ts').replace('.ts', '.js')}:{rng.randint(10, 700)}:{rng.randint(3, 40)})")
    return "\n".join(lines)


def ci_log(rng: random.Random, job: str, tests: int, failures: tuple[str, ...] = (), lang: str = "ts",
           extra: str = "") -> str:
    """A GitHub Actions job log; `failures` are test names that fail, `extra` lines go in the test step."""
    h, m, day = rng.randint(0, 23), rng.randint(0, 59), rng.randint(10, 28)
    clock = [h * 3600 + m * 60 + rng.randint(0, 59)]

    def ts() -> str:
        clock[0] += rng.randint(0, 4)
        s = clock[0] % 86400
        return f"2026-03-{day:02d}T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{rng.randint(1000000, 9999999)}Z"

    out = [f"{ts()} ##[group]Run actions/checkout@v4", f"{ts()} Syncing repository: acme/platform",
           f"{ts()} HEAD is now at {sha(rng)} {rng.choice(VERBS)} {rng.choice(NOUNS)} handling", f"{ts()} ##[endgroup]"]
    if lang == "py":
        out += [f"{ts()} ##[group]Run pip install -r requirements-dev.txt",
                *(f"{ts()} Collecting {rng.choice(VERBS)}-{rng.choice(NOUNS)}=={rng.randint(0, 9)}.{rng.randint(0, 20)}" for _ in range(rng.randint(6, 14))),
                f"{ts()} ##[endgroup]", f"{ts()} ##[group]Run pytest -x -q --durations=5 tests/"]
    else:
        out += [f"{ts()} ##[group]Run npm ci", f"{ts()} added {rng.randint(800, 1900)} packages in {rng.randint(9, 60)}s",
                f"{ts()} ##[endgroup]", f"{ts()} ##[group]Run npm test -- --ci --reporters=default"]
    failed = set(failures)
    names = [f"{rng.choice(NOUNS)} › {rng.choice(VERBS)}s {rng.choice(NOUNS)} when {rng.choice(NOUNS)} is {rng.choice(('stale', 'missing', 'locked', 'expired', 'empty'))}"
             for _ in range(tests)]
    for name in names + list(failures):
        mark = "✕" if name in failed else "✓"
        out.append(f"{ts()}   {mark} {name} ({rng.randint(1, 900)} ms)")
    if extra:
        out += [f"{ts()} {line}" for line in extra.splitlines()]
    for name in failures:
        out += [f"{ts()}   ● {name}", ""] + [f"{ts()}     {line}" for line in stack_trace(rng, lang, frames=5).splitlines()]
    status = f"Tests: {len(failures)} failed, {tests} passed, {tests + len(failures)} total"
    out += [f"{ts()} {status}", f"{ts()} Time: {rng.randint(20, 400)}.{rng.randint(0, 9)} s"]
    if failures:
        out.append(f"{ts()} ##[error]Process completed with exit code 1.")
    out.append(f"{ts()} ##[endgroup]")
    return f"job {job}: {'failure' if failures else 'success'}\n" + "\n".join(out)


def review_thread(rng: random.Random, file: str, lang: str, comments: int) -> str:
    out = []
    for i in range(comments):
        who = rng.choice(PEOPLE)
        line = rng.randint(10, 400)
        remark = rng.choice((
            f"nit: `{ident(rng)}` reads oddly here, maybe `{ident(rng)}`?",
            f"This swallows the error from `{ident(rng)}`; we lose the {rng.choice(NOUNS)} id in the logs.",
            f"Can we add a test for the empty {rng.choice(NOUNS)} case? It broke in prod in {rng.choice(('January', 'March', 'the last release'))}.",
            f"Is the timeout of {rng.randint(2, 90)}s intentional? The upstream SLA is {rng.randint(1, 30)}s.",
            "LGTM once CI is green.",
            f"Please don't log the raw {rng.choice(NOUNS)} here, it can contain PII.",
        ))
        out += [f"{who} commented on {file}:{line}", "> " + code_line(rng, lang).split("\n")[0].strip(), remark]
        if rng.random() < 0.5:
            out.append(f"  ↳ {rng.choice(PEOPLE)}: {rng.choice(('Fixed in ' + sha(rng), 'Good catch, done.', 'Intentional, see the ADR.', 'Will do in a follow-up.'))}")
        out.append("")
    return "\n".join(out).rstrip()


def app_log(rng: random.Random, service: str, lines: int, planted: dict[int, str] | None = None) -> str:
    """JSON-lines application log; `planted` puts exact lines at given positions."""
    planted = planted or {}
    out = []
    t = rng.randint(0, 80000)
    for i in range(lines):
        t += rng.randint(0, 3)
        if i in planted:
            out.append(planted[i])
            continue
        level = rng.choices(("info", "debug", "warn", "error"), (60, 25, 10, 5))[0]
        msg = rng.choice((f"{rng.choice(VERBS)} {rng.choice(NOUNS)} ok", f"slow {rng.choice(NOUNS)} query",
                          f"retrying {rng.choice(NOUNS)} {rng.choice(VERBS)}", f"{rng.choice(NOUNS)} cache miss"))
        out.append(f'{{"ts":"2026-03-14T{t // 3600 % 24:02d}:{t // 60 % 60:02d}:{t % 60:02d}Z","level":"{level}","svc":"{service}",'
                   f'"msg":"{msg}","req":"{sha(rng, 12)}","ms":{rng.randint(1, 4000)}}}')
    return "\n".join(out)


def metrics_table(rng: random.Random, service: str, minutes: int, spike: tuple[int, float] | None = None) -> str:
    out = [f"# {service}: rate(http_requests_total[1m]) by status, p99 latency", "minute  rps    5xx%   p99_ms"]
    for i in range(minutes):
        err = round(rng.uniform(0.05, 0.6), 2)
        if spike and i >= spike[0]:
            err = round(spike[1] + rng.uniform(0, 1.5), 2)
        out.append(f"t+{i:<4d}  {rng.randint(300, 2400):<5d}  {err:<5}  {rng.randint(40, 900)}")
    return "\n".join(out)


def kubectl_pods(rng: random.Random, service: str, n: int, bad: int = 0) -> str:
    out = ["NAME                                   READY   STATUS             RESTARTS   AGE"]
    for i in range(n):
        status = "CrashLoopBackOff" if i < bad else "Running"
        out.append(f"{service}-{sha(rng, 9)}-{sha(rng, 5):<10} {'0/1' if i < bad else '1/1'}     {status:<18} {rng.randint(0, 9) if i >= bad else rng.randint(5, 40):<10} {rng.randint(1, 59)}m")
    return "\n".join(out)


def runbook(rng: random.Random, service: str, steps: list[str]) -> str:
    out = [f"# Runbook: {service} database cutover", "", f"Owner: team-{rng.choice(NOUNS)}   On-call: @{rng.choice(PEOPLE)}", "",
           "## Preconditions", f"- replication lag below {rng.randint(1, 5)}s for 10 minutes",
           f"- `{service}` has no deploy in flight (`deployctl status {service}`)", "- alert silence created for the cutover window", "",
           "## Steps"]
    for i, step in enumerate(steps, 1):
        out += [f"{i}. {step}", f"   ```\n   $ {rng.choice(('kubectl', 'psql', 'deployctl', 'pgcopy'))} {rng.choice(VERBS)} {service} --{rng.choice(NOUNS)}={rng.randint(1, 99)}\n   ```"]
    out += ["", "## Verification", f"- dashboards: grafana/d/{sha(rng, 8)}/{service}", "- 5xx rate, p99 latency, connection count on the new cluster",
            "", "## Notes", *(f"- {rng.choice(NOUNS)} {rng.choice(VERBS)} can take up to {rng.randint(2, 40)} minutes on large tenants" for _ in range(rng.randint(2, 5)))]
    return "\n".join(out)


def filler_paragraph(rng: random.Random, topic: str) -> str:
    """A sentence or two of agent narration about `topic`."""
    return rng.choice((
        f"Looked through {topic}; nothing unexpected apart from the {rng.choice(NOUNS)} handling in {ident(rng)}.",
        f"{topic}: the change is mechanical, but {ident(rng)} now runs before {ident(rng)}, so ordering matters.",
        f"Checked {topic} against the tests; coverage of the {rng.choice(NOUNS)} path is thin but acceptable.",
        f"{topic} looks fine. One question about the {rng.choice(NOUNS)} retry budget, noted in the review.",
    ))
