#!/usr/bin/env node
// The naive rewrite-summary strategy as an external process: Node 18+, no dependencies.
//
// It does what strategies/naive.py does, over compaction-bench's external-strategy protocol
// (compaction-bench's docs/protocol.md): JSON Lines on stdin/stdout, writer calls with
// `fetch` to the OpenAI-compatible endpoint in COMPACTION_BENCH_WRITER_URL. At the trigger the
// writer gets the system prompt, the previous summary plus every message since, and a generic
// "summarise everything" instruction; its answer replaces the whole history as one user-role
// message tagged `summary`. If the request still does not fit, the oldest turns are dropped.
//
//   compaction-bench run suite=smoke strategies=[exec] 'strategy.exec.command=[node,src/bench/examples/external/naive.mjs]'
//
// Options: --budget (share of the window, or tokens; 0.1), --keep-last N (0), --trigger (share or
// tokens; default the bench's limit), --prompt FILE (default: the built-in naive's prompt).

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const VERSION = 1;
const DROP_TARGET = 0.8;
const HERE = dirname(fileURLToPath(import.meta.url));
const PROMPT = join(HERE, "..", "..", "strategies", "prompts", "naive.md");

const share = (value, window) => Math.trunc(value <= 1 ? value * window : value);

// Lines from the bench, one promise at a time.
class Bench {
  constructor() {
    this.buffer = "";
    this.lines = [];
    this.waiting = [];
    this.closed = false;
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk) => {
      this.buffer += chunk;
      let i;
      while ((i = this.buffer.indexOf("\n")) >= 0) {
        const line = this.buffer.slice(0, i);
        this.buffer = this.buffer.slice(i + 1);
        if (this.waiting.length) this.waiting.shift()(line);
        else this.lines.push(line);
      }
    });
    process.stdin.on("end", () => {
      this.closed = true;
      while (this.waiting.length) this.waiting.shift()(null);
    });
  }

  send(obj) {
    process.stdout.write(JSON.stringify(obj) + "\n");
  }

  async receive() {
    const line = this.lines.length ? this.lines.shift()
      : this.closed ? null : await new Promise((resolve) => this.waiting.push(resolve));
    return line === null ? null : JSON.parse(line);
  }

  // Token counts (and texts cut to `limit`) by the bench's own tokenizer.
  async count(texts, limit = null) {
    this.send(limit === null ? { type: "count", texts } : { type: "count", texts, limit });
    const reply = await this.receive();
    if (!reply || reply.type !== "counted") throw new Error(`expected a 'counted' reply, got ${JSON.stringify(reply)}`);
    return reply;
  }
}

function wire(m) {
  const out = { role: m.role, content: m.text };
  if (m.calls && m.calls.length) {
    out.tool_calls = m.calls.map((c) => ({ id: c.id, type: "function",
      function: { name: c.tool, arguments: JSON.stringify(c.args) } }));
  }
  if (m.role === "tool") {
    out.tool_call_id = m.call;
    if (m.tool) out.name = m.tool;
  }
  return out;
}

// One writer call through the bench's endpoint; throws with the server's message.
async function chat(messages, maxTokens) {
  const url = process.env.COMPACTION_BENCH_WRITER_URL.replace(/\/$/, "") + "/chat/completions";
  const resp = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${process.env.OPENAI_API_KEY || ""}` },
    body: JSON.stringify({ model: "writer", messages, max_tokens: maxTokens }),
  });
  const data = await resp.json().catch(() => null);
  if (!resp.ok) throw new Error(data?.error?.message ?? `HTTP ${resp.status}`);
  return data.choices[0].message.content ?? "";
}

// Each assistant message travels with the tool results answering its calls.
function turnUnits(messages) {
  const units = [];
  const owner = new Map();
  for (const m of messages) {
    if (m.role === "tool" && owner.has(m.call)) {
      owner.get(m.call).push(m);
      continue;
    }
    const unit = [m];
    units.push(unit);
    for (const c of m.calls || []) owner.set(c.id, unit);
  }
  return units;
}

const failed = (before, error) => ({ ok: false, before, after: before, error });

class Naive {
  constructor(bench, begin, { budget, keepLast, trigger, prompt }) {
    Object.assign(this, { bench, keepLast, prompt });
    this.window = begin.window;
    this.limit = begin.limit;
    this.perMessage = begin.per_message;
    this.perRequest = begin.per_request;
    this.system = begin.system;
    this.budget = Math.max(1, share(budget, this.window));
    this.trigger = trigger === null ? this.limit : share(trigger, this.window);
    this.messages = [];
    this.rounds = 0;
    this.sent = [];              // ids of the context last sent to the bench
    this.announced = new Set();  // ids the bench already knows (recorded, or written and sent)
    this.instruction = null;
  }

  size(messages = this.messages) {
    let n = this.system.tokens + this.perMessage * (messages.length + 1) + this.perRequest;
    for (const m of messages) n += m.tokens;
    return n;
  }

  // `added`: the messages recorded since the last exchange; the bench already appended the first
  // `appended` of them to the context (it did not ask, as `wake_above` allowed).
  async prepare(added, appended) {
    added.forEach((m, i) => {
      this.messages.push(m);
      this.announced.add(m.id);
      if (i < appended) this.sent.push(m.id);
    });
    const size = this.size();
    const comp = size > this.trigger || size > this.limit ? await this.compact() : null;
    // no need to ask again while the context only grows and stays within both thresholds
    const reply = { type: "context", ...this.delta(), wake_above: Math.min(this.trigger, this.limit) };
    if (comp) reply.compaction = comp;
    return reply;
  }

  // The context as the previous one's first `keep` messages plus the rest (ids, or new messages).
  delta() {
    const ids = this.messages.map((m) => m.id);
    let keep = 0;
    while (keep < Math.min(ids.length, this.sent.length) && ids[keep] === this.sent[keep]) keep++;
    const rest = this.messages.slice(keep).map((m) => {
      if (this.announced.has(m.id)) return m.id;
      this.announced.add(m.id);
      return { id: m.id, role: m.role, tag: m.tag, text: m.text };
    });
    this.sent = ids;
    return { keep, messages: rest };
  }

  async compact() {
    const before = this.size();
    const pinned = this.messages.length && this.messages[0].tag === "summary" ? 1 : 0;
    if (!this.instruction) {
      const text = this.prompt.replaceAll("{budget}", String(this.budget));
      this.instruction = { role: "user", text, tokens: (await this.bench.count([text])).tokens[0] };
    }
    const [head, tail] = this.split();
    if (head.length <= pinned) {   // only the previous summary could go: nothing to do unless it overflows
      if (before <= this.limit) return null;
      return this.fit(failed(before, "nothing new to summarise"), pinned);
    }
    let text;
    try {
      text = await chat([wire({ role: "system", text: this.system.text }), ...head.map(wire),
        wire(this.instruction)], this.budget);
    } catch (err) {
      return this.fit(failed(before, `model failed: ${err.message}`), pinned);
    }
    text = text.trim();
    if (!text) return this.fit(failed(before, "the writer returned no summary"), pinned);
    const problems = [];
    const counted = await this.bench.count([text], this.budget);
    let tokens = counted.tokens[0];
    if (tokens > this.budget) {
      problems.push(`summary of ${tokens} tokens exceeds its budget of ${this.budget}: cut to it`);
      text = counted.texts[0];
      tokens = (await this.bench.count([text])).tokens[0];
    }
    this.rounds += 1;
    const summary = { id: `summary-${this.rounds}`, role: "user", tag: "summary", text, tokens };
    this.messages = [summary, ...tail];
    const comp = { before, after: this.size(), text, problems,
      fields: { budget: this.budget, summary_tokens: summary.tokens,
        summarised: head.map((m) => m.id), verbatim: tail.map((m) => m.id) } };
    return this.fit(comp, 1);
  }

  // (to summarise, kept verbatim): the last `keepLast` messages in whole turns stay, and more stay
  // while the writer request plus the summary would overflow the window.
  split() {
    const units = turnUnits(this.messages);
    let n = units.length;
    let kept = 0;
    while (n > 0 && kept + units[n - 1].length <= this.keepLast) {
      kept += units[n - 1].length;
      n -= 1;
    }
    let head = units.slice(0, n).flat();
    while (n > 1 && this.size([...head, this.instruction]) + this.budget > this.window) {
      n -= 1;
      head = head.slice(0, head.length - units[n].length);
    }
    return [head, units.slice(n).flat()];
  }

  // Still over the limit: drop the oldest turns (never the first `pinned` messages).
  fit(comp, pinned = 0) {
    const size = this.size();
    if (size <= this.limit) return comp;
    const head = this.messages.slice(0, pinned);
    const rest = this.messages.slice(pinned);
    const units = turnUnits(rest);
    let i = 0;
    let total = size;
    const goal = Math.trunc(DROP_TARGET * this.limit);
    while (i < units.length - 1 && total > goal) {
      for (const m of units[i]) total -= m.tokens + this.perMessage;
      i += 1;
    }
    const dropped = units.slice(0, i).flat();
    const gone = new Set(dropped);
    this.messages = [...head, ...rest.filter((m) => !gone.has(m))];
    comp.after = this.size();
    comp.fallback = "drop_oldest";
    comp.fields = comp.fields || {};
    comp.fields.dropped = [...(comp.fields.dropped || []), ...dropped.map((m) => m.id)];
    if (comp.after > this.limit) {
      (comp.problems = comp.problems || []).push(
        `still ${comp.after} tokens after dropping: the newest turn alone exceeds the limit of ${this.limit}`);
    }
    return comp;
  }
}

function options(argv) {
  const opts = { budget: 0.1, keepLast: 0, trigger: null, prompt: PROMPT };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === "--budget") opts.budget = Number(value);
    else if (flag === "--keep-last") opts.keepLast = Number.parseInt(value, 10);
    else if (flag === "--trigger") opts.trigger = Number(value);
    else if (flag === "--prompt") opts.prompt = value;
    else throw new Error(`unknown option ${flag} (--budget, --keep-last, --trigger, --prompt)`);
  }
  return opts;
}

async function main() {
  const opts = options(process.argv.slice(2));
  opts.prompt = readFileSync(opts.prompt, "utf8");
  const bench = new Bench();
  const begin = await bench.receive();
  if (!begin || begin.type !== "begin" || begin.version !== VERSION) {
    bench.send({ type: "error", message: `naive.mjs speaks protocol version ${VERSION}` });
    return 1;
  }
  bench.send({ type: "hello", version: VERSION, name: "naive.mjs" });
  const strategy = new Naive(bench, begin, opts);
  for (let msg; (msg = await bench.receive()) !== null;) {
    if (msg.type === "prepare") bench.send(await strategy.prepare(msg.add, msg.appended ?? 0));
    else if (msg.type === "end") break;
  }
  return 0;
}

// exitCode, not exit(): a pipe write still under way would be cut off.
main().then((code) => {
  process.exitCode = code;
  process.stdin.destroy();
}, (err) => {
  process.stderr.write(`naive.mjs: ${err.stack || err}\n`);
  process.exitCode = 1;
  process.stdin.destroy();
});
