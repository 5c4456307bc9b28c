// The site search, for a pasted error message: the entries whose signatures match the
// query are listed first, with the part of the query that matched marked, above the
// full-text results.
//
// The query is matched by the log page's worker (diagnose-worker.js) against
// signatures.json: the same compiled patterns and the same line rules (log prefixes like
// "[rank3]:" or a timestamp stripped, ANSI codes removed, the line cap) as the log page and
// `failpedia diagnose`, so a message the command line recognizes is recognized here too.
// Nothing leaves the browser. The worker is started once the page is idle, so that the
// first paste does not wait for a thread to start; it fetches signatures.json when the
// search box is first focused, and each query is matched as it is typed, without the
// full-text search's debounce: one request at a time, the latest text next. Where no
// signature matches, the entries with a message close to the query (search-paste.js's
// closeness, over search/messages.json) are listed instead, with no part marked: an alias,
// or a line cut short, is answered at once too, not when the full-text index has loaded.
// Where no message is close either, and the query reads as an error or was pasted from a
// log, the entries nearest to it in wording are listed, labelled as not matched: a second
// worker, which reads nearest.json once the first has read signatures.json, ranks them as
// `failpedia diagnose` and the log page do. Each listed entry shows its quick answer and a link to
// its fix.
//
// search-paste.js asks `match` for the matcher's answer before it sends a query to the
// full-text search, and hands that search's answer to `arrange`, which leaves out the pages
// already listed here and the pages that hold too few of the query's words, and writes the
// result count. Every text put on the page (entry titles, the query) is set as text, never
// as HTML.
(function () {
  "use strict";
  var script = document.currentScript;
  var assets = new URL(".", script ? script.src : location.href);
  var siteRoot = new URL("../", assets);
  var QUERY = "[data-md-component=search-query]";
  var RESULT = "[data-md-component=search-result]";
  // The most entries listed for one query, and how much of the query is shown around the
  // marked part: a pasted message can be long, a result stays a few lines high.
  var MAX_ENTRIES = 5;
  var CONTEXT_CHARS = 48;
  var MAX_MARK_CHARS = 240;

  var worker = null;
  var failed = false;
  var inFlight = null;    // the text the worker is matching now
  var next = null;        // the text to match when it is done
  var answers = new Map();  // text -> the worker's result (the last few texts)
  var waiting = new Map();  // text -> resolvers of match(text)
  var shown = null;       // {query, findings} on the page now
  var pages = null;       // {query, count} of the full-text answer for the query shown
  var settled = null;     // {query, entries, pages} once both answers for it are on the page

  function box() { return document.querySelector(QUERY); }

  // For a message no signature matches: the entry pages' messages (search/messages.json)
  // and the entries' titles and quick answers (signatures.json, which the worker reads
  // too), loaded with the worker; null where they cannot be read.
  var closeData = null;
  function loadClose() {
    if (!closeData) {
      var read = function (name) {
        return fetch(new URL(name, siteRoot).href).then(function (response) {
          if (!response.ok) throw new Error(name + ": " + response.status);
          return response.json();
        });
      };
      closeData = Promise.all([read("search/messages.json"), read("signatures.json")])
        .then(function (both) {
          if (both[0].format !== 1) return null;
          var entries = new Map();
          var byId = new Map();
          both[1].entries.forEach(function (entry) {
            entries.set(new URL(entry.url, siteRoot).pathname, entry);
            byId.set(entry.id, entry);
          });
          return { messages: both[0], entries: entries, byId: byId };
        })
        .catch(function () { return null; });
    }
    return closeData;
  }

  // The entries with a message close to `text` (search-paste.js decides which), as the
  // worker lists an entry it matched; `first` is null: no pattern marks a part of the text.
  function closeEntries(text, data) {
    if (!data || !window.failpediaClosePages) return [];
    return window.failpediaClosePages(text, data.messages).map(function (found) {
      var entry = data.entries.get(new URL(found.page, siteRoot).pathname);
      return entry && { id: entry.id, title: entry.title, url: entry.url,
                        summary: entry.summary || "", first: null, message: found.message };
    }).filter(Boolean).slice(0, MAX_ENTRIES);
  }

  // The result, where no signature matched, with `close` (the entries close to the text)
  // and, where there are none, `nearest` (those nearest to it in wording), which the second
  // worker ranks meanwhile.
  function withUnmatched(text, result) {
    if (!result || result.findings.length || !text) return Promise.resolve(result);
    var near = nearestIds(text, result);
    return loadClose().then(function (data) {
      result.close = closeEntries(text, data);
      if (result.close.length) return result;
      return near.then(function (found) {
        result.nearest = nearestListed(found, data);
        return result;
      });
    });
  }

  // What the page lists above the full-text results: the matched entries, else the close,
  // else the nearest in wording.
  function listed(result) {
    var kind = listedKind(result);
    if (kind === "matched") return result.findings;
    return kind === "close" ? result.close : (result.nearest || []);
  }

  // Which of those it is: "matched", "close", "nearest" or "" (nothing listed).
  function listedKind(result) {
    if (result.findings.length) return "matched";
    if (result.close && result.close.length) return "close";
    return result.nearest && result.nearest.length ? "nearest" : "";
  }

  function signaturesUrl() { return new URL("signatures.json", siteRoot).href; }
  function nearestUrl() { return new URL("nearest.json", siteRoot).href; }

  // Two workers of the same script: the matcher, which reads signatures.json, and one that
  // reads only nearest.json, on a thread of its own, so that reading it does not hold up a
  // match. It starts reading once the matcher has compiled signatures.json: started
  // together, the two slowed each other on a machine with two cores (a matched line's
  // first result came 35 ms later, a line answered by the nearest entries 45 ms later).
  var nearWorker = null;
  function createWorker() {
    if (worker || failed) return;
    try {
      worker = new Worker(new URL("diagnose-worker.js", assets));
    } catch (error) {
      fail();
      return;
    }
    worker.onmessage = answered;
    worker.onerror = fail;
    try {
      nearWorker = new Worker(new URL("diagnose-worker.js", assets));
      nearWorker.onmessage = nearAnswered;
      nearWorker.onerror = nearFailed;
    } catch (error) {
      nearWorker = null;
    }
  }

  var warmed = false;
  function start() {
    loadClose();
    createWorker();
    if (worker && !warmed) {
      warmed = true;
      worker.postMessage({ indexUrl: signaturesUrl(), warm: true });
    }
  }

  // The full-text index is requested once the matcher's first answer is drawn
  // (search-paste.js), so that reading it does not hold that answer up.
  function indexAfterFirstAnswer() {
    if (!window.failpediaWantSearchIndex) return;
    requestAnimationFrame(function () { setTimeout(window.failpediaWantSearchIndex, 0); });
  }

  // Without a matcher (no workers, signatures.json missing) the full-text search still works.
  function fail() {
    indexAfterFirstAnswer();
    failed = true;
    if (worker) worker.terminate();
    worker = null;
    inFlight = next = null;
    if (reply) reply(null);
    reply = null;
    waiting.forEach(function (resolvers, text) { settle(text, null); });
  }

  function settle(text, result) {
    if (result) {
      answers.set(text, result);
      if (answers.size > 8) answers.delete(answers.keys().next().value);
    }
    var resolvers = waiting.get(text);
    waiting.delete(text);
    (resolvers || []).forEach(function (resolve) { resolve(result); });
  }

  function ask(text) {
    if (answers.has(text)) {
      show(text, answers.get(text));
      return;
    }
    start();
    if (!worker) return;
    if (inFlight !== null) {
      if (next !== null && next !== text) settle(next, null);  // superseded before it ran
      next = text;
      return;
    }
    inFlight = text;
    call({ indexUrl: signaturesUrl(), text: text, name: "search", context: 0 })
      .then(function (message) { return message && withUnmatched(text, message.result); })
      .then(function (result) {
        if (inFlight !== text) return;  // the matcher failed meanwhile
        inFlight = null;
        settle(text, result);
        if (result) show(text, result);
        indexAfterFirstAnswer();
        if (next !== null) {
          var following = next;
          next = null;
          ask(following);
        }
      });
  }

  // One request to the matcher at a time: `reply` resolves it with the worker's answer (its
  // "done" message), or with null where the worker failed.
  var reply = null;
  function call(message) {
    if (!worker) return Promise.resolve(null);
    return new Promise(function (resolve) {
      reply = resolve;
      worker.postMessage(message);
    });
  }

  // A query of this many words or more is a message pasted whole, not words typed to
  // search for: it is looked up by wording even where no word of it reads as an error (a
  // warning cut off before its "UserWarning:").
  var PASTED_WORDS = 8;
  // So is a shorter one with anything but letters, spaces and hyphens in it: a log line or
  // a name from one (`CUDNN_STATUS_NOT_INITIALIZED`, `eval_loss = nan`,
  // `torch._inductor.exc.TritonMissing: ...`), not words typed to search for ("nan loss").
  var NOT_TYPED_WORDS = /[^\p{L}\s-]/u;

  // Whether `text`, which has no line that reads as an error, was pasted from a log.
  function pastedFromLog(text) {
    return NOT_TYPED_WORDS.test(text.trim()) || text.trim().split(/\s+/).length >= PASTED_WORDS;
  }

  // The ids (with scores, best first) of the entries nearest in wording to the most
  // error-like lines of the text, or to the whole text where it was pasted from a log with
  // no such line, and how many of them to list: from the second worker, none where it is
  // missing or failed.
  var nearRequests = new Map();  // request number -> its resolver
  var nearNumber = 0;
  function nearestIds(text, result) {
    var lines = result.unmatched;
    var anyScore = false;
    if (!lines.length) {
      if (!pastedFromLog(text)) return Promise.resolve(null);
      lines = [{ score: 0, text: text }];
      anyScore = true;
    }
    if (!nearWorker) return Promise.resolve(null);
    nearNumber += 1;
    var number = nearNumber;
    return new Promise(function (resolve) {
      nearRequests.set(number, resolve);
      nearWorker.postMessage({ nearestUrl: nearestUrl(), nearestTo: lines, anyScore: anyScore,
                               number: number });
    });
  }

  function nearAnswered(event) {
    var message = event.data;
    if (message && message.type === "error") nearFailed();  // nearest.json unread
    if (!message || message.type !== "nearest") return;
    var resolve = nearRequests.get(message.number);
    nearRequests.delete(message.number);
    if (resolve) resolve(message);
  }

  // Without the second worker only the nearest entries are missing.
  function nearFailed() {
    if (nearWorker) nearWorker.terminate();
    nearWorker = null;
    nearRequests.forEach(function (resolve) { resolve(null); });
    nearRequests.clear();
  }

  // The nearest entries to list, as the log page lists them (listed-entries.js): at most
  // as many as the rules allow and this list shows, with no part of the text marked.
  function nearestListed(found, data) {
    if (!found || !found.nearest || !data) return [];
    return window.failpediaNearestListed(found.nearest, function (id) { return data.byId.get(id); },
                                         Math.min(found.most, MAX_ENTRIES));
  }

  function answered(event) {
    var message = event.data;
    if (message && message.type === "warm" && nearWorker) {
      nearWorker.postMessage({ nearestUrl: nearestUrl(), warm: true });
    }
    if (!message || message.type === "progress" || message.type === "warm") return;
    if (message.type !== "done") {  // signatures.json unread
      fail();
      return;
    }
    var resolve = reply;
    reply = null;
    if (resolve) resolve(message);
  }

  // The matcher's answer for `text` (null where there is none), once it has one.
  function match(text) {
    if (answers.has(text)) return Promise.resolve(answers.get(text));
    if (failed || !text) return Promise.resolve(null);
    return new Promise(function (resolve) {
      if (!waiting.has(text)) waiting.set(text, []);
      waiting.get(text).push(resolve);
      if (inFlight !== text && next !== text) ask(text);
    });
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // Where the worker's line (the query after its log prefixes, cut at the line cap) starts
  // in the query, so the mark falls on the query as typed: the prefixes are shown before
  // it. -1 where it is not found as is (ANSI codes were removed from it, say).
  function lineStart(query, line) {
    return line ? query.indexOf(line) : -1;
  }

  // The query with the matched part marked: [before, marked, after], each cut to a few lines.
  function marked(query, first) {
    var chars = Array.from(first.text);  // the match is counted in code points
    var before = chars.slice(0, first.match[0]).join("");
    var hit = chars.slice(first.match[0], first.match[1]).join("");
    var after = chars.slice(first.match[1]).join("");
    var start = lineStart(query, first.text);
    if (start >= 0) {
      before = query.slice(0, start) + before;
      var end = start + first.text.length;
      after += query.slice(end, end + 2 * CONTEXT_CHARS);  // all that can be shown of it
    }
    before = Array.from(before);
    after = Array.from(after);
    hit = Array.from(hit);
    return [
      (before.length > CONTEXT_CHARS ? "\u2026" : "") + before.slice(-CONTEXT_CHARS).join(""),
      hit.length > MAX_MARK_CHARS ? hit.slice(0, MAX_MARK_CHARS).join("") + "\u2026" : hit.join(""),
      after.slice(0, CONTEXT_CHARS).join("") + (after.length > CONTEXT_CHARS ? "\u2026" : ""),
    ];
  }

  function owners() {
    var result = document.querySelector(RESULT);
    if (!result) return null;
    var block = result.querySelector(":scope > [data-fp-search-owners]");
    if (!block) {
      block = element("ol", "fp-search-owners");
      block.setAttribute("data-fp-search-owners", "");
      block.hidden = true;
      // Between the theme's result count (its first child) and its list (its last child).
      result.insertBefore(block, result.lastElementChild);
    }
    return block;
  }

  // `text` into `node`, its `code` spans as code (as the theme shows a page's title), the
  // rest as text: entry titles and summaries are Markdown, and never HTML here.
  function withCode(node, text) {
    String(text).split("`").forEach(function (part, index) {
      if (!part) return;
      node.appendChild(index % 2 ? element("code", null, part) : document.createTextNode(part));
    });
    return node;
  }

  // The id of the Fix heading on every entry page (templates/entry.md.j2's "## Fix").
  var FIX_ANCHOR = "fix";

  // A matched entry: its title, the query with the matched part marked and the entry's
  // quick answer (its summary, from signatures.json through the worker), all one link to
  // the page, then a link straight to the page's fix.
  function entryItem(query, finding) {
    var item = element("li", "md-search-result__item fp-search-owner");
    item.setAttribute("data-entry", finding.id);
    var page = new URL(finding.url, siteRoot);
    var link = element("a", "md-search-result__link");
    link.href = page.href;
    link.tabIndex = -1;
    var article = element("article", "md-search-result__article md-typeset");
    article.appendChild(element("div", "md-search-result__icon md-icon"));
    article.appendChild(withCode(element("h1"), finding.title));
    var line = element("p", "fp-search-owner__line");
    if (finding.first) {
      var parts = marked(query, finding.first);
      line.appendChild(document.createTextNode(parts[0]));
      line.appendChild(element("mark", null, parts[1]));
      line.appendChild(document.createTextNode(parts[2]));
    } else if (finding.message) {  // an entry close to the text: its message close to it
      line.textContent = finding.message;
    } else {  // an entry nearest in wording: nothing of it matched
      line.className += " fp-search-owner__nearest";
      line.textContent = "Not matched: nearest in wording";
    }
    article.appendChild(line);
    if (finding.summary) {
      article.appendChild(withCode(element("p", "fp-search-owner__answer"), finding.summary));
    }
    link.appendChild(article);
    item.appendChild(link);
    var fix = element("a", "fp-search-owner__fix", "How to fix it");
    page.hash = FIX_ANCHOR;
    fix.href = page.href;
    item.appendChild(fix);
    return item;
  }

  // The worker lists findings in the log page's order (an initiating failure first, a
  // cause before what it causes, a wrapper last): they are shown as it lists them.
  function show(query, result) {
    var input = box();
    if (!input || input.value !== query) return;  // an answer for text no longer there
    var block = owners();
    if (!block) return;
    var findings = query ? listed(result) : [];
    block.textContent = "";
    findings.slice(0, MAX_ENTRIES).forEach(function (finding) {
      block.appendChild(entryItem(query, finding));
    });
    block.hidden = !findings.length;
    shown = { query: query, findings: findings, errorLike: result.unmatched.length > 0,
              kind: listedKind(result) };
    writeCount();
  }

  function clear() {
    var block = owners();
    if (block) {
      block.textContent = "";
      block.hidden = true;
    }
    shown = pages = settled = null;
  }

  function plural(count, one, other) {
    return count === 1 ? one : other.replace("#", String(count));
  }

  function countText() {
    var input = box();
    if (!shown || !input || input.value !== shown.query) return null;  // not for this text
    var entries = shown.findings.length;
    var parts = [];
    if (entries && shown.kind === "matched") {
      parts.push(plural(entries, "1 entry matches this message", "# entries match this message"));
    } else if (shown.errorLike) {
      parts.push("No entry's signature matches this message");
    }
    if (entries && shown.kind === "close") {
      parts.push(plural(entries, "1 entry has a message close to it",
                        "# entries have a message close to it"));
    } else if (entries && shown.kind === "nearest") {
      parts.push(plural(entries, "1 entry is nearest to it in wording",
                        "the # entries nearest to it in wording are listed"));
    }
    if (pages && pages.query === shown.query) {
      var count = pages.count;
      var other = entries ? "other " : "";
      var words = parts.length ? "its words" : "these words";  // of the message, or of prose
      parts.push(count
        ? plural(count, "1 " + other + "page mentions " + words,
                 "# " + other + "pages mention " + words)
        : "no " + other + "page mentions " + words);
    }
    if (!parts.length) return null;
    var text = parts.join("; ");
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  // The theme's count (its first child of the result), replaced by this one whenever the
  // theme writes its own.
  function writeCount() {
    var result = document.querySelector(RESULT);
    var meta = result && result.firstElementChild;
    var text = countText();
    if (!meta || text === null || meta.textContent === text) return;
    meta.textContent = text;
  }

  // The query terms each page holds: the theme's answer marks each term as found or not
  // in the page and in each of its sections.
  function heldTerms(group) {
    var terms = {};
    group.forEach(function (doc) {
      Object.keys(doc.terms || {}).forEach(function (term) {
        terms[term] = terms[term] || !!doc.terms[term];
      });
    });
    return terms;
  }

  // A page mentions the query's words when it holds at least 40% of what they weigh, a
  // word weighing more the fewer pages hold it (log(pages / pages holding it)). The
  // full-text search lists a page holding any one of them: "RuntimeError", "of" or
  // "version" alone put 90 pages of 93 in the answer to a pasted message. The answer lists
  // every page holding any of the words, so it tells how many pages hold each; a word no
  // page holds weighs nothing, and neither does a number (a time, a size, a line number:
  // what differs from one run to the next). The theme names a stop word
  // ("of", "is") only where a page holds a word it starts ("offline"): a word missing
  // from a page's terms is one of those, and weighs nothing either.
  var MENTIONS = 0.4;
  var SHARE_STEPS = 3;
  var NUMBER = /^[0-9.]+$/;

  function mentionShares(items, pageCount) {
    var held = items.map(heldTerms);
    var holders = {};
    var stopWords = new Set();
    held.forEach(function (terms) {
      Object.keys(terms).forEach(function (term) {
        holders[term] = (holders[term] || 0) + (terms[term] ? 1 : 0);
      });
    });
    held.forEach(function (terms) {
      Object.keys(holders).forEach(function (term) {
        if (!(term in terms)) stopWords.add(term);
      });
    });
    var total = Math.max(pageCount || 0, items.length);
    var weight = {};
    var sum = 0;
    Object.keys(holders).forEach(function (term) {
      var counted = holders[term] && !stopWords.has(term) && !NUMBER.test(term);
      weight[term] = counted ? Math.log((total + 1) / holders[term]) : 0;
      sum += weight[term];
    });
    return held.map(function (terms) {
      if (!sum) return 1;
      var share = 0;
      Object.keys(terms).forEach(function (term) { if (terms[term]) share += weight[term]; });
      return share / sum;
    });
  }

  function pagePath(group) {
    return new URL(String(group[0] && group[0].location || ""), siteRoot).pathname;
  }

  // The full-text answer for `query`: its pages without those listed above and those that
  // hold too few of its words, though the first page and the first `close` (those holding
  // one of their messages nearly word for word, search-paste.js) are always kept. The count
  // is written once both answers are in.
  function arrange(query, items, result, pageCount, close) {
    var input = box();
    if (result && input && input.value === query && (!shown || shown.query !== query)) {
      shown = { query: query, findings: listed(result),
                errorLike: result.unmatched.length > 0, kind: listedKind(result) };
    }
    var listedPages = new Set((shown && shown.query === query ? shown.findings : [])
      .map(function (finding) { return new URL(finding.url, siteRoot).pathname; }));
    var shares = mentionShares(items, pageCount);
    // After the pages close to the query (which search-paste.js put first), pages holding
    // a larger share of what the query's words weigh come first, in thirds (a page holding
    // two thirds or more, then one third or more, then the rest), in lunr's order within
    // each: lunr's score grows with how often a page holds a common word ("RuntimeError",
    // "error"), so a page with many messages outranked the one page holding the query's
    // rare words ("state_dict", "loading"). Over the real-world lines no signature
    // matches, thirds put the right entry first more often than lunr's order or the share
    // alone.
    var first = Math.max(close || 0, 0);
    var order = items.map(function (group, position) { return position; });
    order = order.slice(0, first).concat(order.slice(first).sort(function (a, b) {
      return Math.floor(shares[b] * SHARE_STEPS) - Math.floor(shares[a] * SHARE_STEPS) || a - b;
    }));
    var kept = order.filter(function (position) {
      var mentions = position < Math.max(close || 0, 1) || shares[position] >= MENTIONS;
      return mentions && !listedPages.has(pagePath(items[position]));
    }).map(function (position) { return items[position]; });
    pages = { query: query, count: kept.length };
    // The theme renders the answer and writes its own count once this returns; this count
    // replaces it.
    setTimeout(function () {
      writeCount();
      settled = { query: query, entries: listedPages.size, pages: kept.length };
    }, 0);
    return kept;
  }

  function watch() {
    var input = box();
    var result = document.querySelector(RESULT);
    if (!input || !result || input.getAttribute("data-fp-search-owner")) return;
    input.setAttribute("data-fp-search-owner", "1");
    owners();
    input.addEventListener("focus", start);
    var onChange = function () {
      if (input.value) ask(input.value);
      else clear();
    };
    input.addEventListener("input", onChange);
    input.addEventListener("keyup", onChange);
    if (input.form) input.form.addEventListener("reset", function () { setTimeout(clear, 0); });
    new MutationObserver(writeCount)
      .observe(result.firstElementChild, { childList: true, characterData: true, subtree: true });
  }

  // Enter in the search box opens the first result: the matched entry where there is one
  // (the theme would open the full-text result with the highest score).
  window.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || !event.target || !event.target.matches ||
        !event.target.matches(QUERY)) return;
    var first = document.querySelector(RESULT + " > [data-fp-search-owners]:not([hidden]) a[href]");
    if (!first) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    first.click();
  }, true);

  // The query as the matcher read it, without its log prefixes ("[rank3]: ", a timestamp),
  // where it read it as a line that holds a signature or looks like an error; else as is.
  function line(query, result) {
    if (result && result.findings.length) return result.findings[0].first.text;
    if (result && result.unmatched.length) return result.unmatched[0].text;
    return query;
  }

  // What the page shows (for tests and the curious): the query whose matched entries are
  // listed, and the query whose full-text results are listed too.
  function state() {
    return { shown: shown && { query: shown.query, entries: shown.findings.map(function (f) {
               return f.id; }) },
             settled: settled };
  }

  // The worker is started once the page has loaded and is idle: starting a thread took a
  // tenth of a second and more of the first paste's wait on a slow machine. It reads
  // nothing until the search box is first used.
  function startWorkerWhenIdle() {
    if (window.requestIdleCallback) requestIdleCallback(createWorker, { timeout: 3000 });
    else setTimeout(createWorker, 1000);
  }

  window.failpediaSearchOwner = { match: match, line: line, arrange: arrange, state: state };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch);
  else watch();
  if (document.readyState === "complete") startWorkerWhenIdle();
  else window.addEventListener("load", startWorkerWhenIdle);
})();
