"""Porting endpoints in order, interrupted by subtasks that each end with "Task complete".

The seed's "subtask mistaken for the goal": a summary written right after a
subtask finishes tends to say the work is done, while most of the endpoint
queue is still ahead.
"""
from __future__ import annotations

from bench.scenarios.generators import content as C
from bench.scenarios.generators.builder import Script, begin
from bench.scenarios.generators.queue import at_fraction, pad, run

SYSTEM = """You are a coding agent in the acme/api repository, working for {user}.
Tools: read, edit, run, git.
Background messages carry a [Harness: <source>] first line."""

ROUTES = ("GET /v1/invoices", "POST /v1/invoices", "GET /v1/invoices/:id", "PATCH /v1/invoices/:id", "GET /v1/customers",
          "POST /v1/customers", "GET /v1/customers/:id/usage", "POST /v1/refunds", "GET /v1/refunds/:id", "POST /v1/webhooks",
          "DELETE /v1/webhooks/:id", "GET /v1/reports/monthly", "POST /v1/exports", "GET /v1/exports/:id")

# (the user's ask, the subtask's item id as the texts name it, command, output, commit subject, the agent's last words)
SUBTASKS = (
    ("the build on main is broken by a stale generated client; regenerate it first", "generated client", "npm run gen:client",
     "Generated src/client (214 files). Build: ok", "regenerate the stale API client",
     "The generated client is regenerated; main builds again. Task complete."),
    ("write the shared Fastify auth hook first, the remaining routes all need it", "auth hook", "edit src/hooks/auth.ts",
     "Created src/hooks/auth.ts (61 lines); tests: 9 passed", "add the shared Fastify auth hook",
     "The shared auth hook is written and tested. Task complete."),
)


def build(sid: str, title: str, window: int, target: int, seed: int, tags: list[str]) -> Script:
    s = begin(sid, title, window, seed, tags, ("Noor", "Felix", "Ama", "Ivan"), SYSTEM)
    rng, user = s.rng, s.user_name
    scale = s.scale
    routes = list(ROUTES)
    u1 = s.user(f"We're porting the billing API from Express to Fastify. Port the {len(routes)} routes in this order: "
                f"{'; '.join(routes)}. Keep the response shapes byte-for-byte identical; the contract tests in tests/contract "
                f"must pass after every route. Don't change any public URL.", dt=0)
    s.mission("m-port", u1, f"port all {len(routes)} billing routes from Express to Fastify in order", ["Express to Fastify"])
    s.constraint("c-shape", u1, "must", "Keep the response shapes byte-for-byte identical", ["byte-for-byte"])
    s.constraint("c-urls", u1, "ban", "Don't change any public URL", ["public URL"])
    hooks: dict[int, list] = {}

    def subtask(k: int, resume: str) -> None:
        ask, item, cmd, out, subject, finish = SUBTASKS[k]
        u = s.user(f"Before the next route: {ask}.")
        s.act("On it.", "run", {"cmd": cmd}, out + "\n" + C.ci_log(rng, "build", max(6, int(30 * scale))))
        commit = C.sha(rng)
        aid, r = s.act("Committing.", "git", {"args": ["commit", "-am", subject]}, f"[port/fastify {commit}] {subject}")
        s.fact(f"f-sub-{k + 1}", r, [commit, subject])
        end = s.say(finish)
        s.workstream(f"w-sub-{k + 1}", u, ask.split(";")[0][:60], [(item, aid)])
        s.probe(f"p-trap-{k + 1}", end, "continuation", "Is the job finished? What is the next step?", [resume],
                ["all done", "nothing left", "the job is finished"],
                f"Not finished: the subtask is done, the port continues with {resume}.")

    for k, frac in enumerate((0.3, 0.65)):
        i = at_fraction(len(routes), frac)
        hooks[i] = [lambda k=k, r=routes[i]: subtask(k, r)]

    def port(i: int, route: str, budget: int) -> str:
        method, url = route.split(" ", 1)
        file = "src/routes/" + url.strip("/").replace("/:", "_").replace("/", "_").replace("v1_", "") + ".ts"
        s.act(f"Porting {route}.", "read", {"path": file.replace("routes", "express/routes")},
              C.diff(rng, file, "ts", max(2, int(5 * scale))).split("\n", 4)[-1])
        s.act("Writing the Fastify handler.", "edit", {"path": file, "method": method}, f"Edited {file} ({rng.randint(20, 90)} lines)")

        def contract() -> None:
            fails = () if rng.random() < 0.6 else (f"contract › {route} returns the same {rng.choice(C.NOUNS)} shape",)
            s.act("Contract tests.", "run", {"cmd": f"npm run test:contract -- --grep '{route}'"},
                  C.ci_log(rng, "contract", max(6, int(40 * scale)), fails))
        contract()
        pad(s, budget - 200, contract, most=8)
        end = s.say(f"{route} ported; contract tests pass.")
        return end

    done = run(s, routes, port, target, hooks=hooks, probes=3, noun="route", why="the order given")
    s.workstream("w-routes", u1, "route port", done)
    s.say(f"All {len(routes)} routes run on Fastify with identical response shapes.")
    return s
