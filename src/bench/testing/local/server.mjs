#!/usr/bin/env node
// A minimal OpenAI-compatible chat-completions server for a local GGUF model on CPU,
// built on node-llama-cpp. One request is evaluated at a time; others wait in a queue.
//
//   node server.mjs [--port 8080|0] [--model PATH.gguf] [--ctx N] [--threads N] [--name ID] [--quiet]
//
// --port 0 picks a free port. The first line on stdout is always
//   listening http://127.0.0.1:PORT/v1
// printed once the model is loaded and the server accepts requests. Logs go to stderr.
//
// Endpoints: POST /v1/chat/completions, GET /v1/models, GET /health.
// The prompt is the model's own chat template (tokenizer.chat_template in the GGUF), rendered
// with @huggingface/jinja (the Jinja engine node-llama-cpp itself uses for GGUF templates) and
// tokenized by the model with special tokens parsed. Sampling: temperature 0 (the default) is greedy.

import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
import {Template} from "@huggingface/jinja";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MAX_BODY = 64 * 1024 * 1024;

// ---------------------------------------------------------------- options
function parseArgs(argv) {
    const opts = {
        port: 8080,
        host: "127.0.0.1",
        model: path.join(HERE, "model", "SmolLM2-135M-Instruct.Q4_1.gguf"),
        ctx: null, // default: the model's training context
        threads: 1,
        flashAttn: "on",
        name: "smollm2",
        log: null,
        quiet: false,
    };
    const need = (i, flag) => {
        if (i + 1 >= argv.length) usage(`${flag} needs a value`);
        return argv[i + 1];
    };
    const int = (v, flag, min) => {
        if (!/^\d+$/.test(v) || Number(v) < min) usage(`${flag} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
        return Number(v);
    };
    for (let i = 0; i < argv.length; i++) {
        let a = argv[i], v = null;
        const eq = a.indexOf("=");
        if (a.startsWith("--") && eq > 0) { v = a.slice(eq + 1); a = a.slice(0, eq); }
        const val = () => { if (v !== null) return v; v = need(i, a); i++; return v; };
        switch (a) {
            case "--port": opts.port = int(val(), a, 0); if (opts.port > 65535) usage("--port must be <= 65535"); break;
            case "--model": opts.model = path.resolve(val()); break;
            case "--ctx": opts.ctx = int(val(), a, 16); break;
            case "--threads": opts.threads = int(val(), a, 0); break;
            case "--name": opts.name = val(); break;
            case "--flash-attn": opts.flashAttn = val(); if (!["on", "off", "auto"].includes(opts.flashAttn)) usage("--flash-attn is on, off or auto"); break;
            case "--log": opts.log = path.resolve(val()); break;
            case "--quiet": opts.quiet = true; break;
            case "-h": case "--help": usage(null); break;
            default: usage(`unknown option ${a}`);
        }
    }
    return opts;
}

function usage(err) {
    const text = "usage: node server.mjs [--port N (0 = any free port)] [--model PATH.gguf] [--ctx N] " +
        "[--threads N (0 = all cores; default 1)] [--flash-attn on|off|auto (default on)] [--name MODEL_ID]\n" +
        "       [--log FILE.jsonl (every request and answer, verbatim)] [--quiet]\n";
    if (err) { process.stderr.write(`server.mjs: ${err}\n${text}`); process.exit(2); }
    process.stdout.write(text); process.exit(0);
}

const opts = parseArgs(process.argv.slice(2));
const log = (...a) => { if (!opts.quiet) process.stderr.write(`[server] ${a.join(" ")}\n`); };

// ---------------------------------------------------------------- model
const t_start = performance.now();
const llama = await getLlama({
    gpu: false,
    build: "never",              // never try to compile or download llama.cpp
    maxThreads: opts.threads,
    logLevel: LlamaLogLevel.warn,
    logger: (level, message) => process.stderr.write(`[llama.cpp ${level}] ${message.trimEnd()}\n`),
});
let model;
try {
    model = await llama.loadModel({modelPath: opts.model});
} catch (e) {
    process.stderr.write(`server.mjs: cannot load model ${opts.model}: ${e.message}\n`);
    process.exit(1);
}
const trainCtx = model.trainContextSize;
const context = await model.createContext({
    contextSize: opts.ctx ?? trainCtx,
    sequences: 1,
    threads: opts.threads,
    flashAttention: opts.flashAttn === "auto" ? "auto" : opts.flashAttn === "on",
});
const sequence = context.getSequence();
const CTX = context.contextSize; // llama.cpp may round the requested size up

const md = model.fileInfo.metadata;
const templateText = md?.tokenizer?.chat_template;
if (typeof templateText !== "string" || !templateText) {
    process.stderr.write(`server.mjs: ${opts.model} has no tokenizer.chat_template; this server renders only the model's own template\n`);
    process.exit(1);
}
const template = new Template(templateText);
const bosString = model.tokens.bosString ?? "";
const eosString = model.tokens.eosString ?? "";
const fingerprint = `node-llama-cpp-${llama.llamaCppRelease.release}-${path.basename(opts.model, ".gguf")}`;
log(`model ${opts.model} (${md?.general?.name ?? "?"}), context ${CTX} tokens (trained ${trainCtx}),` +
    ` threads ${opts.threads || llama.cpuMathCores}, flash attention ${context.flashAttention}, llama.cpp ${llama.llamaCppRelease.release}, loaded in ${((performance.now() - t_start) / 1000).toFixed(2)} s`);

// ---------------------------------------------------------------- requests
class HttpError extends Error {
    constructor(status, message, {type = "invalid_request_error", param = null, code = null} = {}) {
        super(message);
        this.status = status; this.type = type; this.param = param; this.code = code;
    }
}

function textOf(content, where) {
    if (content === null || content === undefined) return "";
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
        return content.map((part, j) => {
            if (typeof part === "string") return part;
            if (part && part.type === "text" && typeof part.text === "string") return part.text;
            throw new HttpError(400, `${where}.content[${j}]: only text parts are supported (got type ${JSON.stringify(part?.type)})`, {param: `${where}.content`});
        }).join("");
    }
    throw new HttpError(400, `${where}.content must be a string, an array of text parts or null`, {param: `${where}.content`});
}

// OpenAI messages -> the plain {role, content} list the model's template expects.
function toTemplateMessages(messages) {
    if (!Array.isArray(messages) || messages.length === 0)
        throw new HttpError(400, "'messages' must be a non-empty array", {param: "messages"});
    return messages.map((m, i) => {
        const where = `messages[${i}]`;
        if (!m || typeof m !== "object") throw new HttpError(400, `${where} must be an object`, {param: where});
        let role = m.role;
        if (role === "developer") role = "system";
        if (!["system", "user", "assistant", "tool"].includes(role))
            throw new HttpError(400, `${where}.role must be one of system, developer, user, assistant, tool (got ${JSON.stringify(m.role)})`, {param: `${where}.role`});
        let content = textOf(m.content, where);
        if (role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length) {
            // The template has no tool-call syntax; show the calls as text so the model still sees them.
            const calls = m.tool_calls.map((c) => {
                const fn = c?.function ?? {};
                let args = fn.arguments;
                try { if (typeof args === "string") args = JSON.parse(args); } catch { /* keep the string */ }
                return `<tool_call>\n${JSON.stringify({name: fn.name, arguments: args ?? {}})}\n</tool_call>`;
            }).join("\n");
            content = content ? `${content}\n${calls}` : calls;
        }
        return {role, content};
    });
}

function positiveInt(body, key) {
    const v = body[key];
    if (v === undefined || v === null) return null;
    if (!Number.isInteger(v) || v < 1) throw new HttpError(400, `'${key}' must be an integer >= 1 (got ${JSON.stringify(v)})`, {param: key});
    return v;
}

function numberIn(body, key, lo, hi, dflt) {
    const v = body[key];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== "number" || !Number.isFinite(v) || v < lo || v > hi)
        throw new HttpError(400, `'${key}' must be a number in [${lo}, ${hi}] (got ${JSON.stringify(v)})`, {param: key});
    return v;
}

function validate(body) {
    if (!body || typeof body !== "object" || Array.isArray(body)) throw new HttpError(400, "the body must be a JSON object");
    if (body.stream === true) throw new HttpError(400, "streaming is not supported by this server; send stream=false (or leave it out)", {param: "stream"});
    if (body.n !== undefined && body.n !== null && body.n !== 1) throw new HttpError(400, "only n=1 is supported", {param: "n"});
    const maxA = positiveInt(body, "max_completion_tokens");
    const maxB = positiveInt(body, "max_tokens");
    const temperature = numberIn(body, "temperature", 0, 2, 0);
    const topP = numberIn(body, "top_p", 0, 1, null);
    let seed = body.seed;
    if (seed !== undefined && seed !== null && !Number.isInteger(seed)) throw new HttpError(400, "'seed' must be an integer", {param: "seed"});
    let stop = body.stop ?? [];
    if (typeof stop === "string") stop = [stop];
    if (!Array.isArray(stop) || stop.some((s) => typeof s !== "string")) throw new HttpError(400, "'stop' must be a string or an array of strings", {param: "stop"});
    stop = stop.filter((s) => s.length > 0);
    return {
        messages: toTemplateMessages(body.messages),
        maxTokens: maxA ?? maxB,
        temperature,
        topP,
        seed: seed ?? null,
        stop,
        model: typeof body.model === "string" && body.model ? body.model : opts.name,
        ignored: ["tools", "tool_choice", "response_format", "logprobs"].filter((k) => body[k] !== undefined && body[k] !== null),
    };
}

function render(messages) {
    return template.render({
        messages,
        add_generation_prompt: true,
        bos_token: bosString,
        eos_token: eosString,
    });
}

let served = 0;
async function complete(req, abort) {
    const prompt = render(req.messages);
    let tokens = model.tokenize(prompt, true);
    if (model.tokens.shouldPrependBosToken && model.tokens.bos !== null && tokens[0] !== model.tokens.bos)
        tokens = [model.tokens.bos, ...tokens];
    const promptTokens = tokens.length;
    if (promptTokens >= CTX) {
        throw new HttpError(400,
            `This model's maximum context length is ${CTX} tokens. However, your messages resulted in ${promptTokens} tokens ` +
            `(the prompt alone must leave room for at least 1 completion token). Shorten the messages or restart the server with a larger --ctx (trained: ${trainCtx}).`,
            {param: "messages", code: "context_length_exceeded"});
    }
    const room = CTX - promptTokens;
    const limit = Math.min(req.maxTokens ?? room, room);

    await sequence.clearHistory(); // no KV reuse between requests: each answer depends on its request alone
    const out = [];
    let finish = "length";
    let text = null;
    const t0 = performance.now();
    let tFirst = null;
    if (limit > 0) {
        const options = {temperature: req.temperature, yieldEogToken: false};
        if (req.temperature > 0) {
            if (req.topP !== null) options.topP = req.topP;
            options.seed = req.seed ?? 0; // a fixed default seed keeps sampling reproducible too
        }
        finish = "stop"; // the generator ends by itself only on an end-of-generation token
        for await (const token of sequence.evaluate(tokens, options)) {
            if (tFirst === null) tFirst = performance.now();
            out.push(token);
            if (abort.aborted) { finish = "abort"; break; }
            if (req.stop.length) {
                const sofar = model.detokenize(out);
                const hits = req.stop.map((s) => sofar.indexOf(s)).filter((k) => k >= 0);
                if (hits.length) { text = sofar.slice(0, Math.min(...hits)); finish = "stop"; break; }
            }
            if (out.length >= limit) { finish = "length"; break; }
        }
    }
    const tEnd = performance.now();
    if (text === null) {
        text = model.detokenize(out);
        // A cut (max_tokens, context end) can fall inside a multi-byte character whose bytes span
        // several tokens: leave its incomplete bytes out instead of answering U+FFFD.
        if (finish !== "stop" && text.endsWith("\uFFFD")) {
            for (let k = 1; k <= 3 && k < out.length; k++) {
                const shorter = model.detokenize(out.slice(0, out.length - k));
                if (!shorter.endsWith("\uFFFD")) { text = shorter; break; }
            }
        }
    }
    const promptMs = (tFirst ?? tEnd) - t0;
    const genMs = tFirst === null ? 0 : tEnd - tFirst;
    const timings = {
        prompt_n: promptTokens,
        prompt_ms: +promptMs.toFixed(1),
        // The first token arrives with the prompt pass; later ones are one decode step each.
        predicted_n: out.length,
        predicted_ms: +genMs.toFixed(1),
        prompt_per_second: +(promptTokens / (promptMs / 1000)).toFixed(1),
        predicted_per_second: out.length > 1 ? +((out.length - 1) / (genMs / 1000)).toFixed(1) : null,
    };
    return {text, finish, promptTokens, completionTokens: out.length, timings};
}

// One request at a time: every request waits for the one before it.
let tail = Promise.resolve();
let queued = 0;
function enqueue(fn) {
    queued++;
    const run = tail.then(fn, fn);
    tail = run.then(() => {}, () => {}).finally(() => { queued--; });
    return run;
}

// ---------------------------------------------------------------- HTTP
function send(res, status, obj) {
    if (res.writableEnded || res.destroyed) return;
    const body = JSON.stringify(obj);
    res.writeHead(status, {"content-type": "application/json", "content-length": Buffer.byteLength(body)});
    res.end(body);
}

function sendError(res, e) {
    if (e instanceof HttpError) {
        send(res, e.status, {error: {message: e.message, type: e.type, param: e.param, code: e.code}});
    } else {
        log(`internal error: ${e?.stack ?? e}`);
        send(res, 500, {error: {message: `internal error: ${e?.message ?? e}`, type: "server_error", param: null, code: null}});
    }
}

function readBody(req) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        let size = 0;
        req.on("data", (c) => {
            size += c.length;
            if (size > MAX_BODY) { reject(new HttpError(413, `body over ${MAX_BODY} bytes`)); req.destroy(); return; }
            chunks.push(c);
        });
        req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        req.on("error", reject);
    });
}

let shuttingDown = false;
const inflight = new Set();
let logged = 0;
// --log: one JSON line per chat request, the body as received and what was answered (verbatim)
function logExchange(rec) {
    if (!opts.log) return;
    try {
        fs.appendFileSync(opts.log, JSON.stringify({seq: ++logged, ...rec}) + "\n");
    } catch (e) {
        log(`cannot write --log ${opts.log}: ${e.message}`);
    }
}

async function handleChat(req, res) {
    const received = new Date().toISOString();
    const raw = await readBody(req);
    let body;
    try { body = JSON.parse(raw); } catch (e) {
        logExchange({received, status: 400, request: raw.slice(0, 2000), error: `not JSON: ${e.message}`});
        throw new HttpError(400, `the body is not JSON: ${e.message}`);
    }
    let parsed;
    try { parsed = validate(body); } catch (e) {
        logExchange({received, status: e.status ?? 500, request: body, error: e.message});
        throw e;
    }
    const abort = {aborted: false};
    const onClose = () => { if (!res.writableEnded) abort.aborted = true; };
    res.on("close", onClose);
    inflight.add(abort);
    const waitedFrom = performance.now();
    try {
        let result;
        try {
            result = await enqueue(async () => {
                if (abort.aborted || shuttingDown) return null; // the client left while queued
                return complete(parsed, abort);
            });
        } catch (e) {
            logExchange({received, status: e.status ?? 500, request: body, error: e.message});
            throw e;
        }
        if (result === null || abort.aborted) {
            logExchange({received, status: null, request: body, error: "dropped: the client closed the connection" +
                (result ? ` after ${result.completionTokens} generated tokens` : " while queued"),
                partial: result ? result.text : null});
            log(`request dropped: client closed the connection${shuttingDown ? " (shutting down)" : ""}`);
            if (shuttingDown) throw new HttpError(503, "server is shutting down", {type: "server_error"});
            return;
        }
        const n = ++served;
        logExchange({received, status: 200, id: `chatcmpl-${process.pid}-${n}`, request: body,
            response: {text: result.text, finish_reason: result.finish,
                usage: {prompt_tokens: result.promptTokens, completion_tokens: result.completionTokens}, timings: result.timings}});
        const queueMs = performance.now() - waitedFrom - result.timings.prompt_ms - result.timings.predicted_ms;
        log(`#${n} prompt ${result.promptTokens} tok in ${result.timings.prompt_ms} ms (${result.timings.prompt_per_second} tok/s),` +
            ` generated ${result.completionTokens} tok (${result.timings.predicted_per_second ?? "-"} tok/s), finish ${result.finish},` +
            ` waited ${Math.max(0, queueMs).toFixed(0)} ms${parsed.ignored.length ? `, ignored: ${parsed.ignored.join(", ")}` : ""}`);
        send(res, 200, {
            id: `chatcmpl-${process.pid}-${n}`,
            object: "chat.completion",
            created: Math.floor(Date.now() / 1000),
            model: parsed.model,
            system_fingerprint: fingerprint,
            choices: [{
                index: 0,
                message: {role: "assistant", content: result.text},
                logprobs: null,
                finish_reason: result.finish,
            }],
            usage: {
                prompt_tokens: result.promptTokens,
                completion_tokens: result.completionTokens,
                total_tokens: result.promptTokens + result.completionTokens,
            },
            timings: result.timings,
        });
    } finally {
        inflight.delete(abort);
        res.off("close", onClose);
    }
}

function modelsList() {
    return {
        object: "list",
        data: [{
            id: opts.name,
            object: "model",
            created: Math.floor(Date.now() / 1000),
            owned_by: "local",
            meta: {file: opts.model, context_length: CTX, trained_context_length: trainCtx, n_params: md?.general?.size_label ?? null},
        }],
    };
}

const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const p = url.pathname.replace(/\/+$/, "");
    (async () => {
        if (shuttingDown) throw new HttpError(503, "server is shutting down", {type: "server_error"});
        if (p === "/v1/chat/completions" || p === "/chat/completions") {
            if (req.method !== "POST") throw new HttpError(405, "use POST");
            return handleChat(req, res);
        }
        if (p === "/v1/models" || p === "/models") {
            if (req.method !== "GET") throw new HttpError(405, "use GET");
            return send(res, 200, modelsList());
        }
        if (p === "/health") return send(res, 200, {status: "ok", queued, served});
        throw new HttpError(404, `no route ${req.method} ${url.pathname}; this server has POST /v1/chat/completions and GET /v1/models`);
    })().catch((e) => sendError(res, e));
});
server.keepAliveTimeout = 5000;

server.listen(opts.port, opts.host, () => {
    const {port} = server.address();
    process.stdout.write(`listening http://${opts.host}:${port}/v1\n`);
    log(`ready after ${((performance.now() - t_start) / 1000).toFixed(2)} s`);
});
server.on("error", (e) => {
    process.stderr.write(`server.mjs: ${e.message}\n`);
    process.exit(1);
});

async function shutdown(sig) {
    if (shuttingDown) return;
    shuttingDown = true;
    log(`${sig}: stopping (served ${served})`);
    for (const a of inflight) a.aborted = true;
    const force = setTimeout(() => process.exit(0), 5000);
    force.unref();
    server.close();
    server.closeAllConnections?.();
    try {
        await tail.catch(() => {});
        log("queue drained"); await context.dispose();
        log("context disposed"); await model.dispose();
        log("model disposed"); await llama.dispose();
        log("llama disposed");
    } catch (e) {
        log(`while disposing: ${e.message}`);
    }
    process.exit(0);
}
process.on("SIGTERM", () => shutdown("SIGTERM"));
process.on("SIGINT", () => shutdown("SIGINT"));
