// The log page's whole worker (docs/assets/diagnose-worker.js) in Node, as the page runs it:
// its message handler reads a log given as a file (plain or gzip, in pieces, through the
// same streams and decoder a browser gives it) or as pasted text, finds the blocks and
// lines, matches, orders the findings, picks the error-like lines and the nearest entries,
// and answers with what the page shows. Nothing of the worker is replaced but what a
// browser provides: fetch reads the index from disk, importScripts loads lunr.js from disk.
//
// Standard input: one JSON request a line, {"index": path of signatures.json (nearest.json
// beside it), "log": a path, or a list of them (files chosen together), "as": "file" |
// "paste", "name": the name of the pasted log}. The first request's index serves every
// request, as a page keeps the index it loaded.
// Standard output: one JSON line per request, the worker's "done" message, or {"error": ...}.
// One process answers every request, with the index compiled once, as a page keeps it.
"use strict";

const fs = require("fs");
const path = require("path");
const readline = require("readline");
const vm = require("vm");
const { pathToFileURL, fileURLToPath } = require("url");

const workerPath = path.join(__dirname, "..", "..", "docs", "assets", "diagnose-worker.js");

let answer = null;
globalThis.onmessage = null;  // the worker sets its handler here, as in a worker scope
globalThis.postMessage = function (message) {
  if (message.type === "progress") return;
  if (answer) answer(message);
};
globalThis.self = { location: { href: pathToFileURL(workerPath).href } };
globalThis.fetch = async function (url) {
  const text = fs.readFileSync(fileURLToPath(String(url)), "utf8");
  return { json: async function () { return JSON.parse(text); } };
};
globalThis.importScripts = function (url) {
  const file = fileURLToPath(String(url));
  vm.runInThisContext(fs.readFileSync(file, "utf8"), { filename: file });
};
vm.runInThisContext(fs.readFileSync(workerPath, "utf8"), { filename: workerPath });

function ask(request) {
  const logs = [].concat(request.log);
  const message = {
    indexUrl: pathToFileURL(request.index).href,
    nearest: true,
  };
  if (request.as === "paste") {
    message.text = new TextDecoder("utf-8").decode(fs.readFileSync(logs[0]));
    message.name = request.name;
  } else {
    message.files = logs.map(function (log) {
      return new File([fs.readFileSync(log)], path.basename(log));
    });
  }
  return new Promise(function (resolve) {
    answer = resolve;
    globalThis.onmessage({ data: message });
  });
}

// Requests are answered one at a time, in order, as a page's worker takes its messages.
let queue = Promise.resolve();
readline.createInterface({ input: process.stdin }).on("line", function (line) {
  queue = queue.then(async function () {
    let reply;
    try {
      reply = await ask(JSON.parse(line));
    } catch (error) {
      reply = { type: "error", message: String(error && error.stack || error) };
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
  });
});
