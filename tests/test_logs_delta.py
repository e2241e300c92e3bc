"""The request log's delta: a shared head found by list compares, the rest matched by identity. Checked
against the rule written out the slow way, on random request sequences."""
from __future__ import annotations

import random

from bench.harness.logs import delta, identity
from bench.harness.messages import common_prefix, make
from bench.tokens import tokenizer


def reference(prev, new):
    """The rule, one message at a time: the first unused previous position at or after the cursor
    with the same identity, else the message is added."""
    seq, cursor = [], 0
    for m in new:
        hit = next((i for i in range(cursor, len(prev)) if identity(prev[i]) == identity(m)), None)
        if hit is None:
            seq.append(m)
            continue
        if seq and isinstance(seq[-1], list) and seq[-1][1] == hit:
            seq[-1][1] = hit + 1
        else:
            seq.append([hit, hit + 1])
        cursor = hit + 1
    return seq


def rebuilt(prev, seq):
    return [m for s in seq for m in (prev[s[0]:s[1]] if isinstance(s, list) else [s])]


def test_delta_follows_the_rule_on_random_requests():
    tok, rnd = tokenizer(), random.Random(7)
    pool = [make(tok, id=f"e{i}", role="user", text=f"line {i % 9}", tag="user") for i in range(40)]
    pool += [make(tok, id=f"e{i}", role="user", text=f"line {i % 9}", tag="user") for i in range(10)]  # equal, not same
    prev, keys = [], None
    for _ in range(400):
        op = rnd.random()
        if op < 0.4:
            new = prev + rnd.sample(pool, rnd.randint(0, 3))
        elif op < 0.7:
            cut = rnd.randint(0, len(prev))
            new = prev[:cut] + rnd.sample(pool, rnd.randint(0, 4)) + prev[cut + rnd.randint(0, 3):]
        elif op < 0.85:
            new = prev[rnd.randint(0, len(prev)):]
        else:
            new = rnd.sample(pool, rnd.randint(0, 12))
        seq, got = delta(prev, new, keys)
        assert seq == reference(prev, new)
        assert [identity(m) for m in rebuilt(prev, seq)] == [identity(m) for m in new]
        if got is not None:
            assert len(got) == len(new) and all(k is None or k == identity(m) for k, m in zip(got, new))
        prev, keys = new, got


def test_common_prefix_counts_the_same_objects_only():
    tok = tokenizer()
    a = [make(tok, id=str(i), role="user", text="x", tag="user") for i in range(9)]
    twin = make(tok, id="4", role="user", text="x", tag="user")       # equal content, another object
    assert common_prefix(a, a[:]) == 9 and common_prefix(a, a[:5]) == 5 and common_prefix([], a) == 0
    assert common_prefix(a, a[:4] + [twin] + a[5:]) == 4
    for n in range(10):
        assert common_prefix(a, a[:n] + [twin] * 3) == n
