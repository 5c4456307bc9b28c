// The log page's worker (docs/assets/diagnose-worker.js), run in Node outside a browser:
// for each request on standard input (one JSON object a line: the index's "rules" and
// "order", canonical "patterns" and log "lines"), it answers on one line how the worker
// reads each line into segments and where each pattern matches in each segment, in code
// points, as Python counts them. test_engines_agree.py asks the same of Python and compares. A request with
// "redact" (texts) is answered with those texts as the worker redacts them for an issue
// link, by the index's "rules".redactions (test_scrubbing.py).
"use strict";

const fs = require("fs");
const path = require("path");
const readline = require("readline");
const vm = require("vm");

const workerPath = path.join(__dirname, "..", "..", "docs", "assets", "diagnose-worker.js");
const context = vm.createContext({ postMessage: function () {}, onmessage: null });
vm.runInContext(fs.readFileSync(workerPath, "utf8"), context, { filename: workerPath });

// Code points before `units` UTF-16 units of `text`.
function codePoints(text, units) {
  return Array.from(text.slice(0, units)).length;
}

function answer(request) {
  if (request.redact) {
    const redact = context.redactor(request.rules.redactions);
    if (!redact) throw new Error("the worker cannot compile the redaction rules");
    return { redacted: request.redact.map(function (text) { return redact(text); }) };
  }
  context.compileIndex({
    site_url: "",
    rules: request.rules,
    order: request.order,
    entries: request.patterns.map(function (source, number) {
      return { id: "pattern-" + number, patterns: [{ source: source, literals: [] }] };
    }),
  });
  const regexes = context.index.entries.map(function (entry) {
    return entry.patterns.length ? entry.patterns[0].regex : null;
  });
  const segments = request.lines.map(function (line) {
    return context.splitLine(line).map(function (segment) { return segment.text; });
  });
  const spans = regexes.map(function (regex) {
    if (!regex) return null;
    return segments.map(function (texts) {
      return texts.map(function (text) {
        const found = regex.exec(text);
        if (!found) return null;
        return [codePoints(text, found.index), codePoints(text, found.index + found[0].length)];
      });
    });
  });
  return { segments: segments, spans: spans };
}

readline.createInterface({ input: process.stdin }).on("line", function (line) {
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (error) {
    reply = { error: String(error && error.stack || error) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
