"""Issue 16, class 5: no failure that looks like success. Over real HTTP to the loopback server: a run
whose writer calls all fail exits 1 with one line; a URL that is not one is bad input before anything
runs; a long Retry-After is capped by max_wait and said; an empty answer is retried, a cut-off one used
but never cached; the answers of a compaction the strategy rejected are forgotten, so a healthy server
is asked again; responses.refresh=true and `compaction-bench cache stats|clear` let a user re-ask."""
from __future__ import annotations

import asyncio
import json

import pytest

from bench.errors import ModelError
from bench.harness.messages import make
from bench.models import ModelConfig, build
from bench.models.cache import ResponseCache
from bench.harness.strategy import Compaction, Strategy
from bench.testing import LoopbackServer
from bench.tokens import tokenizer
from harden import WATCH, cli, one_line

TOK = tokenizer()
ASK = [make(TOK, id="u1", role="user", text="Summarise: the failing test is tests/x.py:88.", tag="user")]
RUN = [f"scenarios=[{WATCH}]", "window=900", "writer.model=openai/test", "writer.backoff=0.01", "concurrency=1",
       "probes.enabled=false"]


def model(server, tmp_path=None, **kw):
    cfg = dict(model="openai/test", api_base=server.url, timeout=5, retries=2, backoff=0.01,
               cache_dir=str(tmp_path / "cache") if tmp_path else None)
    cfg.update(kw)
    m = build(ModelConfig(**cfg))
    m.waits = []

    async def record(seconds: float) -> None:
        m.waits.append(seconds)

    m.sleep = record
    return m


def completion(content, finish="stop") -> dict:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "loopback",
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}]}


class Scripted(LoopbackServer):
    """Answers with the queued bodies first, then as the loopback server does."""

    def __init__(self, *bodies, **kw):
        super().__init__(lifetime=120, **kw)
        self.script = list(bodies)

    def answer(self, body):
        return self.script.pop(0) if self.script else super().answer(body)


@pytest.mark.parametrize("fault", ["500", "400"])
def test_a_run_whose_writer_calls_all_fail_exits_1_with_one_line(tmp_path, fault):
    with LoopbackServer(lifetime=120) as srv:
        srv.fail(fault, times=10_000)
        code, _, err = cli("run", *RUN, "strategies=[naive,truncate]", f"writer.api_base={srv.url}",
                           "writer.retries=1", "responses.enabled=false", f"out={tmp_path / 'r'}")
    assert code == 1
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "writer openai/test: all" in errors[0] and "calls failed" in errors[0], err
    assert len((tmp_path / "r" / "summary.csv").read_text().splitlines()) == 3   # both cells are still stored


def test_some_failed_calls_are_a_warning_and_exit_0(tmp_path):
    with LoopbackServer(lifetime=120) as srv:
        srv.fail("500", times=2)
        code, _, err = cli("run", *RUN, "strategies=[naive]", f"writer.api_base={srv.url}", "writer.retries=1",
                           "responses.enabled=false", f"out={tmp_path / 'r'}")
    assert code == 0 and "warning: writer openai/test: 1 of" in err, err


@pytest.mark.parametrize("url", ["notaurl", "http://127.0.0.1:notaport/v1", "ftp://127.0.0.1/v1", "http:///v1",
                                 "http://exa mple.com/v1"])
def test_a_url_that_is_not_one_is_bad_input_before_the_run(tmp_path, url):
    one_line(*cli("run", *RUN, "strategies=[naive]", f"writer.api_base={url}", f"out={tmp_path / 'r'}")[::2],
             "writer.api_base:", "is not an http(s) URL")
    assert not (tmp_path / "r").exists()          # refused before any cell, so no call was ever tried


def test_a_long_retry_after_is_capped_by_max_wait_and_announced(capsys):
    with LoopbackServer(lifetime=60) as srv:
        srv.fail("429", times=1, retry_after=3600)
        m = model(srv, max_wait=7.5)
        reply = asyncio.run(m.chat(ASK))
    assert reply.retries == 1 and m.waits == [7.5]
    err = capsys.readouterr().err
    assert "waiting 7.5 s" in err and "asked for 3600 s" in err and "max_wait=7.5" in err


def test_a_run_through_a_long_retry_after_finishes_and_says_why_it_waited(tmp_path):
    with LoopbackServer(lifetime=120) as srv:
        srv.fail("429", times=1, retry_after=3600)
        code, _, err = cli("run", *RUN, "strategies=[naive]", f"writer.api_base={srv.url}", "writer.max_wait=0.2",
                           "responses.enabled=false", f"out={tmp_path / 'r'}")
        assert srv.faults_served == 1
    assert code == 0, err
    assert "waiting 0.2 s before try 2 of 4: the server asked for 3600 s (Retry-After), capped by max_wait=0.2" in err


def test_an_empty_answer_is_retried_when_sampling_and_never_cached(tmp_path):
    with Scripted(completion(""), completion(None)) as srv:
        m = model(srv, tmp_path, temperature=0.7)
        reply = asyncio.run(m.chat(ASK))
        assert reply.retries == 2 and reply.text and srv.calls == 3
    assert len(ResponseCache(tmp_path / "cache")) == 1          # only the answer that had something in it
    with Scripted(completion(""), completion(""), completion("")) as srv:
        with pytest.raises(ModelError, match="the answer is empty"):
            asyncio.run(model(srv, None, temperature=0.7).chat(ASK))
    with Scripted(completion(""), completion("late")) as srv:    # at temperature 0 the same request, the same answer
        with pytest.raises(ModelError, match=r"the answer is empty .*not asked again"):
            asyncio.run(model(srv, None).chat(ASK))
        assert srv.calls == 1


def test_a_cut_off_answer_is_used_but_never_cached(tmp_path):
    with Scripted(completion("The failing test is tes", "length")) as srv:
        m = model(srv, tmp_path)
        first = asyncio.run(m.chat(ASK))
        second = asyncio.run(m.chat(ASK))
        assert first.finish == "length" and not second.cached and srv.calls == 2
        third = asyncio.run(m.chat(ASK))
        assert third.cached and srv.calls == 2       # the complete answer was kept


class Picky(Strategy):
    """Asks for a summary and rejects any answer without a `SUMMARY:` line, as a strict parser would."""

    async def compact(self) -> Compaction:
        before = self.size()
        ask = make(self.session.tok, id="ask", role="user", text="Summarise; start with SUMMARY:", tag="instruction")
        reply = await self.session.writer.chat([self.session.system, *self.messages[-6:], ask], max_tokens=80,
                                               purpose="summary")
        if "SUMMARY:" not in reply.text:
            return Compaction(before=before, after=before, ok=False, error="the answer has no SUMMARY: line")
        return Compaction(before=before, after=before, text=reply.text)


def test_answers_the_strategy_rejected_are_forgotten_and_asked_again(tmp_path):
    cache = tmp_path / "cache"
    args = [*RUN, "strategies=[test_harden_5_failures.Picky]", f"responses.dir={cache}"]
    with LoopbackServer(lifetime=120) as srv:
        code, _, err = cli("run", *args, f"writer.api_base={srv.url}", f"out={tmp_path / 'a'}")
        first = srv.calls
    assert code == 0 and first > 0, err
    comps = [json.loads(x) for x in (tmp_path / "a" / "compactions.jsonl").read_text().splitlines()]
    assert comps and all(not c["ok"] and c["error"] for c in comps)
    assert len(ResponseCache(cache)) == 0
    with LoopbackServer(lifetime=120) as srv:                    # a later run asks again, it does not replay
        code, _, err = cli("run", *args, f"writer.api_base={srv.url}", f"out={tmp_path / 'b'}")
        assert code == 0 and srv.calls == first, err


def test_an_unusable_checkpoint_is_a_failed_compaction_and_not_cached(tmp_path):
    cache = tmp_path / "cache"
    always = completion("I have nothing to add.")
    with Scripted(*[always] * 400) as srv:
        code, _, err = cli("run", *[a for a in RUN if not a.startswith("window=")], "strategies=[vibey]",
                           f"writer.api_base={srv.url}", f"responses.dir={cache}", f"out={tmp_path / 'r'}")
        asked = srv.calls
    # a writer none of whose answers did the task: the cells finish, and the exit code says it failed
    assert code == 1 and "writer openai/test: none of its answers did the task" in err, err
    comps = [json.loads(x) for x in (tmp_path / "r" / "compactions.jsonl").read_text().splitlines()]
    rejected = [c for c in comps if c["calls"]]
    assert rejected and all(c["error"] for c in rejected)
    assert all(not c["ok"] or c["fallback"] for c in rejected)
    assert asked > 0 and len(ResponseCache(cache)) == 0


def test_refresh_asks_again_and_cache_stats_and_clear(tmp_path):
    cache = tmp_path / "cache"
    args = [*RUN, "strategies=[naive]", f"responses.dir={cache}"]
    with LoopbackServer(lifetime=120) as srv:
        assert cli("run", *args, f"writer.api_base={srv.url}", f"out={tmp_path / 'a'}")[0] == 0
        asked = srv.calls
        assert cli("run", *args, f"writer.api_base={srv.url}", f"out={tmp_path / 'b'}")[0] == 0
        assert srv.calls == asked                                   # all from the cache
        code, _, err = cli("run", *args, f"writer.api_base={srv.url}", "responses.refresh=true",
                           f"out={tmp_path / 'c'}")
        assert code == 0 and srv.calls == 2 * asked, err            # asked again
    stored = len(ResponseCache(cache))
    code, out, _ = cli("cache", "stats", "--dir", str(cache))
    assert code == 0 and f"{stored} answers" in out and "openai/test" in out
    code, out, _ = cli("cache", "clear", "--dir", str(cache), "--model", "openai/other")
    assert code == 0 and "removed 0 answers" in out and len(ResponseCache(cache)) == stored
    code, out, _ = cli("cache", "clear", "--dir", str(cache))
    assert code == 0 and f"removed {stored} answers" in out and len(ResponseCache(cache)) == 0
    code, out, _ = cli("cache", "stats", "--dir", str(tmp_path / "nowhere"))
    assert code == 0 and "no response cache yet" in out


class Broken(Strategy):
    async def compact(self) -> Compaction:
        raise RuntimeError("a bug in the strategy")


def test_a_cell_that_fails_makes_the_run_exit_1(tmp_path):
    code, _, err = cli("run", f"scenarios=[{WATCH}]", "strategies=[test_harden_5_failures.Broken,truncate]",
                       "probes.enabled=false", f"out={tmp_path / 'r'}")
    assert code == 1 and "error: injected-watch/test_harden_5_failures.Broken" in err
    assert "a bug in the strategy" in (tmp_path / "r" / "errors.jsonl").read_text()
