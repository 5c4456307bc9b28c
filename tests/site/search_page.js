// The site search's own code run in Node, outside a browser, on a built site: the page
// scripts that shape search (assets/search-paste.js, assets/search-owner.js), the signature
// matcher they start (assets/diagnose-worker.js) and the theme's full-text search worker
// (assets/javascripts/workers/search.*.min.js, lunr over search/search_index.json), each
// read from the site as published. Only what a browser would provide is stood in for: a
// few DOM elements (the search box, the result list and its count), workers (each script
// in its own vm context, messages passed as structured clones), fetch and
// XMLHttpRequest reading the site's files, and the theme's bundle, whose part here is to
// send the box's text to its worker on keyup once the index is loaded (its
// mountSearchQuery) and to show the answer it gets back.
//
//   node tests/site/search_page.js SITE_DIR < requests
//
// Standard input holds one JSON object: {"queries": [...], "typed": false}. Each query is
// pasted (one input event, as a mouse paste; with "typed", one input event per
// character, as typing) into an empty box, and the answer is read once the page has both
// the matcher's and the full-text search's answer for it. Standard output gets one JSON
// array, one object a query: "owners" (the entry ids listed above the full-text results,
// in order), "owner_urls" (their page paths), "pages" (the full-text results' page paths,
// in order), "first" (the path of the first result shown), "count" (the count line) and
// "fix_links" (the link under each listed entry).
"use strict";

const fs = require("fs");
const path = require("path");
const vm = require("vm");

const SITE_DIR = path.resolve(process.argv[2] || "site");
const SITE = "http://127.0.0.1/";  // where the page believes it is; files come from SITE_DIR

function siteFile(address) {
  const url = new URL(address, SITE);
  let file = decodeURIComponent(url.pathname);
  if (file.endsWith("/")) file += "index.html";
  return path.join(SITE_DIR, file);
}

// Delivery in a later task, as a worker's messages are.
function later(fn) { setTimeout(fn, 0); }

// --- A worker: the script in its own context. ------------------------------------------

class PageWorker {
  constructor(url) {
    this.url = new URL(String(url), SITE).href;
    this.onmessage = null;
    this.onerror = null;
    this.listeners = [];
    this.dead = false;
    const worker = this;
    const scope = {
      console, URL, TextDecoder, TextEncoder, setTimeout, clearTimeout, structuredClone,
      location: new URL(this.url),
      onmessage: null,
      postMessage(data) {
        const copy = structuredClone(data);
        later(() => worker.deliver(copy));
      },
      addEventListener(type, listener) {
        if (type === "message") scopeListeners.push(listener);
      },
      importScripts(...urls) {
        urls.forEach((address) => {
          const file = siteFile(new URL(address, worker.url).href);
          vm.runInContext(fs.readFileSync(file, "utf8"), context, { filename: file });
        });
      },
      fetch(address) { return siteFetch(new URL(String(address), worker.url).href); },
    };
    const scopeListeners = [];
    scope.self = scope;
    const context = vm.createContext(scope);
    this.scope = scope;
    this.scopeListeners = scopeListeners;
    const file = siteFile(this.url);
    vm.runInContext(fs.readFileSync(file, "utf8"), context, { filename: file });
  }

  postMessage(data) {
    if (this.dead) return;
    if (this.held && data && data.type === 2) {  // the theme's worker: see ThemeWorker
      this.held.push(structuredClone(data));
      return;
    }
    const event = { data: structuredClone(data) };
    later(() => {
      if (this.dead) return;
      if (typeof this.scope.onmessage === "function") this.scope.onmessage(event);
      this.scopeListeners.forEach((listener) => listener(event));
    });
  }

  deliver(data) {
    if (this.dead) return;
    const event = new PageMessageEvent("message", { data });
    if (typeof this.onmessage === "function") this.onmessage(event);
    this.listeners.slice().forEach((listener) => listener.call(this, event));
  }

  addEventListener(type, listener) {
    if (type === "message") this.listeners.push(listener);
  }

  removeEventListener(type, listener) {
    this.listeners = this.listeners.filter((item) => item !== listener);
  }

  terminate() { this.dead = true; }
}

class PageMessageEvent {
  constructor(type, init) { this.type = type; this.data = init && init.data; }
}

class PageEvent {
  constructor(type, init) {
    this.type = type;
    Object.assign(this, init || {});
  }
}

// --- The few elements the scripts touch. ------------------------------------------------

class PageElement {
  constructor(tag) {
    this.tagName = tag.toUpperCase();
    this.childNodes = [];
    this.attributes = {};
    this.className = "";
    this.hidden = false;
    this.listeners = {};
    this.parentNode = null;
    this.text = "";
  }
  get textContent() {
    return this.tagName === "#TEXT" ? this.text
      : this.childNodes.map((child) => child.textContent).join("");
  }
  set textContent(value) {
    if (this.tagName === "#TEXT") this.text = String(value);
    else {
      this.childNodes = [];
      if (value !== "" && value !== null && value !== undefined) {
        this.appendChild(textNode(String(value)));
      }
    }
  }
  get children() { return this.childNodes.filter((child) => child.tagName !== "#TEXT"); }
  get firstElementChild() { return this.children[0] || null; }
  get lastElementChild() { const all = this.children; return all[all.length - 1] || null; }
  appendChild(child) {
    child.parentNode = this;
    this.childNodes.push(child);
    return child;
  }
  insertBefore(child, before) {
    child.parentNode = this;
    const at = this.childNodes.indexOf(before);
    this.childNodes.splice(at < 0 ? this.childNodes.length : at, 0, child);
    return child;
  }
  setAttribute(name, value) { this.attributes[name] = String(value); }
  getAttribute(name) { return name in this.attributes ? this.attributes[name] : null; }
  matches(selector) {
    return selector.split(",").some((one) => {
      one = one.trim();
      if (one === "[data-md-component=search-query]") {
        return this.attributes["data-md-component"] === "search-query";
      }
      if (one.startsWith(".")) return this.className.split(" ").includes(one.slice(1));
      return false;
    });
  }
  querySelector(selector) {
    if (selector === ":scope > [data-fp-search-owners]") {
      return this.children.find((child) => "data-fp-search-owners" in child.attributes) || null;
    }
    throw new Error("no stand-in for querySelector(" + selector + ")");
  }
  addEventListener(type, listener) {
    (this.listeners[type] = this.listeners[type] || []).push(listener);
  }
  dispatchEvent(event) {
    event.target = event.target || this;
    (this.listeners[event.type] || []).forEach((listener) => listener.call(this, event));
    if (this === box && event.type === "keyup") theme.keyup();
    return true;
  }
}

function textNode(text) {
  const node = new PageElement("#text");
  node.text = text;
  return node;
}

const box = new PageElement("input");
box.setAttribute("data-md-component", "search-query");
box.value = "";
box.form = null;
const result = new PageElement("div");
result.setAttribute("data-md-component", "search-result");
const meta = result.appendChild(new PageElement("div"));
meta.className = "md-search-result__meta";
const list = result.appendChild(new PageElement("ol"));
list.className = "md-search-result__list";

const documentListeners = {};
const document = {
  readyState: "complete",
  currentScript: null,
  querySelector(selector) {
    if (selector === "[data-md-component=search-query]") return box;
    if (selector === "[data-md-component=search-result]") return result;
    if (selector.startsWith("[data-md-component=search-result] > [data-fp-search-owners]")) {
      return null;  // Enter: not pressed here
    }
    throw new Error("no stand-in for document.querySelector(" + selector + ")");
  },
  createElement(tag) { return new PageElement(tag); },
  createTextNode(text) { return textNode(text); },
  addEventListener(type, listener) {
    (documentListeners[type] = documentListeners[type] || []).push(listener);
  },
};

// An event on the box, as the browser sends it: to the document's capturing listeners,
// the box's own, then the document's.
function fire(event) {
  event.target = box;
  (box.listeners[event.type] || []).forEach((listener) => listener.call(box, event));
  (documentListeners[event.type] || []).forEach((listener) => listener(event));
}

class PageXMLHttpRequest {
  open(method, url) { this.url = url; }
  send() {}
}

// fetch, as a page has it, reading the site's files.
function siteFetch(address) {
  return new Promise((resolve) => {
    const file = siteFile(new URL(String(address), SITE).href);
    const ok = fs.existsSync(file);
    resolve({
      ok, status: ok ? 200 : 404,
      text: async () => fs.readFileSync(file, "utf8"),
      json: async () => JSON.parse(fs.readFileSync(file, "utf8")),
    });
  });
}

const page = {
  console, URL, setTimeout, clearTimeout, Promise, Map, Set, WeakMap, WeakSet,
  fetch: siteFetch,
  document,
  location: new URL(SITE),
  Worker: PageWorker,
  XMLHttpRequest: PageXMLHttpRequest,
  MessageEvent: PageMessageEvent,
  KeyboardEvent: PageEvent,
  InputEvent: PageEvent,
  Event: PageEvent,
  MutationObserver: class { observe() {} },
  requestAnimationFrame: (callback) => setTimeout(callback, 0),
  addEventListener() {},
};
page.window = page;
const pageContext = vm.createContext(page);
for (const name of ["search-paste.js", "listed-entries.js", "search-owner.js"]) {
  const file = path.join(SITE_DIR, "assets", name);
  document.currentScript = { src: SITE + "assets/" + name };
  vm.runInContext(fs.readFileSync(file, "utf8"), pageContext, { filename: file });
  document.currentScript = null;
}

// --- The theme's part: its worker, fed the index, asked on keyup. ------------------------
//
// The full-text search takes most of a second for a long message (lunr, then each result
// marked), and its answer can change nothing above the entries the matcher lists. So a
// query the matcher listed entries for is answered here with no pages, as if the reader
// had moved on before the full-text answer came, unless the request asks for "full_text";
// every other query gets the theme worker's real answer.

class ThemeWorker extends PageWorker {
  constructor(url) {
    super(url);
    this.held = [];  // queries the page sent, not yet passed on
  }
  // Answer the held queries: by the worker, or with no pages.
  release(real) {
    const queries = this.held.splice(0);
    const held = this.held;
    this.held = null;
    queries.forEach((message) => {
      if (real) this.scopeDispatch(message);
      else later(() => this.deliver({ type: 3, data: { items: [] } }));
    });
    this.held = held;
  }
  scopeDispatch(data) {
    const event = { data };
    later(() => this.scopeListeners.forEach((listener) => listener(event)));
  }
}

const theme = (function () {
  const config = JSON.parse(
    /<script id="__config" type="application\/json">([\s\S]*?)<\/script>/
      .exec(fs.readFileSync(path.join(SITE_DIR, "index.html"), "utf8"))[1]);
  // Its methods are the page's Worker's, as search-paste.js wrapped them.
  const worker = new ThemeWorker(new URL(config.search, SITE).href);
  const wrapped = page.Worker.prototype;
  let ready = false;
  let sent = null;
  let answer = null;  // the last answer's items
  wrapped.addEventListener.call(worker, "message", function (event) {
    const data = event.data;
    if (data.type === 1) {
      ready = true;
      keyup();
    } else if (data.type === 3) {
      answer = data.data.items;
      list.textContent = "";
      data.data.items.forEach(() => list.appendChild(new PageElement("li")));
    }
  });
  const index = JSON.parse(
    fs.readFileSync(path.join(SITE_DIR, "search", "search_index.json"), "utf8"));
  wrapped.postMessage.call(worker, { type: 0, data: { config: index.config, docs: index.docs,
                                                      options: { suggest: false } } });
  // The theme sends the box's text when it changes, once its worker is ready.
  function keyup() {
    if (!ready || box.value === sent) return;
    sent = box.value;
    wrapped.postMessage.call(worker, { type: 2, data: box.value });
  }
  return {
    keyup,
    worker,
    whenReady: () => new Promise((resolve) => {
      const wait = () => (ready ? resolve() : setTimeout(wait, 5));
      wait();
    }),
    take() { const found = answer; answer = null; return found; },
    reset() { answer = null; list.textContent = ""; },
  };
})();

function pagePath(location) {
  return new URL(String(location || ""), SITE).pathname;
}

function textOf(item, className) {
  const found = item.childNodes.concat(item.childNodes.flatMap((child) => child.childNodes))
    .flatMap((child) => [child].concat(child.childNodes))
    .find((child) => child.className === className);
  return found ? found.textContent : null;
}

async function search(query, typed, fullText) {
  // From an empty box, as the search tests in the browser did.
  box.value = "";
  fire(new PageEvent("input", { inputType: "deleteContentBackward" }));
  theme.reset();
  const steps = typed ? Array.from(query).map((_, at, all) => all.slice(0, at + 1).join(""))
    : [query];
  for (const text of steps) {
    box.value = text;
    fire(new PageEvent("input", { inputType: typed ? "insertText" : "insertFromPaste" }));
  }
  const owner = page.failpediaSearchOwner;
  let real = false;
  const start = Date.now();
  for (;;) {
    const state = owner.state();
    if (state.settled && state.settled.query === query) break;
    if (Date.now() - start > 60000) throw new Error("no answer for " + JSON.stringify(query));
    if (theme.worker.held.length) {
      // The matcher has answered by now: the page sends the full-text query after it.
      const listed = state.shown && state.shown.query === query && state.shown.entries.length;
      real = real || fullText || !listed;
      theme.worker.release(real);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await new Promise((resolve) => setTimeout(resolve, 0));
  const answered = theme.take() || [];
  const block = result.children.find((child) => "data-fp-search-owners" in child.attributes);
  const shown = block && !block.hidden ? block.children : [];
  const ownerUrls = shown.map((item) => pagePath(item.children[0].href));
  const pages = answered.map((group) => pagePath(group[0] && group[0].location));
  return {
    query,
    owners: shown.map((item) => item.getAttribute("data-entry")),
    owner_urls: ownerUrls,
    fix_links: shown.map((item) => (item.children[1] ? item.children[1].href : null)),
    answers: shown.map((item) => textOf(item, "fp-search-owner__answer")),
    full_text: real,
    pages: real ? pages : null,
    first: ownerUrls[0] || pages[0] || null,
    count: real ? meta.textContent : null,
  };
}

async function main() {
  const request = JSON.parse(fs.readFileSync(0, "utf8"));
  await theme.whenReady();
  const found = [];
  for (const query of request.queries) {
    found.push(await search(query, !!request.typed, !!request.full_text));
  }
  // Exit once written: a pipe takes a long answer in parts.
  process.stdout.write(JSON.stringify(found) + "\n", () => process.exit(0));
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack || error) + "\n");
  process.exit(1);
});
