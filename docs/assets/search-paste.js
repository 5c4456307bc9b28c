// Make the site search work on pasted error messages.
//
// Material's search runs lunr, whose query syntax gives meaning to characters that error
// messages are full of: a word ending in ":" ("RuntimeError:") is read as a field name and
// dropped, leading "+"/"-" mark presence, and "^ ~ *" are boost, fuzziness and wildcard.
// Queries are cleaned of that syntax before they reach the search worker. The search box
// listens for key events, so a paste with the mouse, a drop or an autocompletion would not
// search: every input event is passed on as a keyup (the search skips repeated values).
//
// lunr scores a page by how many of the query's words it holds, so a page whose messages
// hold more words wins: "a leaf Variable that requires grad is being used in an in-place
// operation" ranked the entry for "a view of a leaf Variable that requires grad ..." first.
// Entry pages carry their messages as tags; results are reordered so that pages with a
// message the query holds nearly all of come first (closest to the query first).
// search-owner.js lists the entries whose signatures match the query above all these.
//
// Loaded in the page head, before the theme's bundle creates the search worker.
(function () {
  "use strict";

  // The query is split the way the index splits page text (the separator in mkdocs.yml:
  // punctuation, and dots except inside numbers) and one-character pieces are dropped:
  // with the lone "s" of "Error(s)", or the letters of "i.e." and "w.r.t.", in the query,
  // pasted messages ranked unrelated pages first and their own entry not at all.
  var SEPARATOR = /[\s\-,:;!=\[\]()"'`/<>|{}*#@?+~^&%$]+|(?<![0-9])\.|\.(?![0-9])/;
  // Absolute file paths ("/tmp/run-8f2k/predict.py", "C:\\work\\x.py") are particular to
  // the machine that printed the message; their pieces only match unrelated pages.
  var ABSOLUTE_PATH = /(^|[\s'"(<=[])(?:[A-Za-z]:)?[\\/](?:[\w.@+~-]+[\\/])+[\w.@+~-]*/g;
  // A query is read up to MAX_QUERY_CHARS characters and MAX_QUERY_WORDS words. The theme
  // renders every result with each query word marked or listed as missing, on the main
  // thread, in time that grows with words times results: a pasted 850 KB log blocked the
  // page for over a minute, 160 words for most of a second. An error message is found by
  // its first words (the catalog's longest, 854 characters and 131 words, still is).
  var MAX_QUERY_CHARS = 1000;
  var MAX_QUERY_WORDS = 64;
  function cleanQuery(text) {
    return String(text)
      .slice(0, MAX_QUERY_CHARS)
      .replace(ABSOLUTE_PATH, "$1 ")
      .split(SEPARATOR)
      .filter(function (token) { return token && token.length > 1; })
      .slice(0, MAX_QUERY_WORDS)
      .join(" ");
  }
  window.failpediaCleanQuery = cleanQuery;

  // A message's words, less its numbers (sizes, line numbers, ranks, times: what differs
  // from one run to the next).
  var NUMBER = /^[0-9.]+$/;
  function words(text) {
    var set = new Set();
    cleanQuery(text).toLowerCase().split(" ").forEach(function (word) {
      if (word && !NUMBER.test(word)) set.add(word);
    });
    return set;
  }

  // Closeness of a query to a page's messages, for the message closest to it: 0 unless the
  // query holds at least CONTAINED of the message's words (a log line holds its message
  // and more: a timestamp, a level, a rank), then 1 plus the Jaccard similarity of the
  // two word sets, so that the message the query is closest to as a whole wins. A message
  // of one word ("Killed") is no evidence.
  var CONTAINED = 0.8;
  // [closeness, position of the closest message] (position -1 where none is close).
  function closest(query, messages) {
    var best = 0, at = -1;
    messages.forEach(function (message, position) {
      if (message.size < 2) return;
      var shared = 0;
      message.forEach(function (word) { if (query.has(word)) shared += 1; });
      if (shared / message.size < CONTAINED) return;
      var score = 1 + shared / (query.size + message.size - shared);
      if (score > best) {
        best = score;
        at = position;
      }
    });
    return [best, at];
  }
  function closeness(query, messages) { return closest(query, messages)[0]; }

  // Pages close to the query come first, closest first; the others keep lunr's order after
  // them. Prose queries ("nan loss") are close to no message and are not reordered.
  function rerank(query, groups, messagesByPage) {
    var queryWords = words(query);
    var scored = groups.map(function (group, position) {
      var page = String(group[0] && group[0].location || "").split("#")[0];
      var score = closeness(queryWords, messagesByPage.get(page) || []);
      return { group: group, position: position, score: score };
    });
    scored.sort(function (a, b) { return b.score - a.score || a.position - b.position; });
    var groups = scored.map(function (item) { return item.group; });
    groups.close = scored.filter(function (item) { return item.score > 0; }).length;
    return groups;
  }

  // Entry pages publish their messages HTML-escaped, since the theme shows them as HTML;
  // their words are those of the message itself ("<lambda>", not "lt lambda gt").
  var ENTITIES = { "&lt;": "<", "&gt;": ">", "&amp;": "&" };
  function unescapeHtml(text) {
    return String(text).replace(/&(?:lt|gt|amp);/g, function (entity) { return ENTITIES[entity]; });
  }

  function messagesByPage(docs) {
    var pages = new Map();
    (docs || []).forEach(function (doc) {
      var page = String(doc.location || "").split("#")[0];
      if (!pages.has(page) && Array.isArray(doc.tags) && doc.tags.length) {
        pages.set(page, doc.tags.map(function (tag) { return words(unescapeHtml(tag)); }));
      }
    });
    return pages;
  }

  // The pages with a message close to `query`, closest first, from the entry pages'
  // messages as search/messages.json publishes them ({location: tags}, written with the
  // index): search-owner.js lists them at once, before the full-text index is loaded, for
  // a message no signature matches (an alias, a line cut short); the full-text answer
  // puts the same pages first (rerank).
  function closePages(query, published) {
    var pages = published.byPage;
    if (!pages) {
      pages = published.byPage = messagesByPage(Object.keys(published.pages).map(function (page) {
        return { location: page, tags: published.pages[page] };
      }));
    }
    var queryWords = words(query);
    var found = [];
    pages.forEach(function (messages, page) {
      var best = closest(queryWords, messages);
      if (best[0] > 0) {
        found.push({ page: page, score: best[0],
                     message: unescapeHtml(published.pages[page][best[1]]) });
      }
    });
    return found.sort(function (a, b) { return b.score - a.score; });
  }
  window.failpediaClosePages = closePages;

  // The search worker receives the index as a message of type 0 and each query as a message of
  // type 2 ({type, data}); it answers a query with a message of type 3. The query is cleaned
  // here so the text in the box stays exactly what the reader pasted. Queries are also
  // debounced: the search runs on every keyup, and a long error message typed or pasted in
  // pieces would otherwise queue one full search per character; a paste or a drop, one
  // input event with the whole text, is searched at once. This script is loaded before
  // the theme's bundle (templates/theme/main.html), so the theme's listener on the worker is
  // wrapped and receives the reordered answer.
  var searches = new WeakMap();  // search worker -> {pages, queries}
  var postMessage = Worker.prototype.postMessage;
  var pending = null;
  Worker.prototype.postMessage = function (message) {
    var worker = this;
    if (message && message.type === 0 && message.data && Array.isArray(message.data.docs)) {
      var pageCount = new Set(message.data.docs.map(function (doc) {
        return String(doc.location || "").split("#")[0];
      })).size;
      searches.set(worker, { pages: messagesByPage(message.data.docs), queries: [],
                             pageCount: pageCount });
      return postMessage.apply(this, arguments);
    }
    if (!(message && message.type === 2 && typeof message.data === "string")) {
      return postMessage.apply(this, arguments);
    }
    var raw = message.data;
    clearTimeout(pending);
    pending = setTimeout(function () {
      // The matcher's answer first (search-owner.js): the pages it lists are left out of
      // the full-text results, and where it read the query as a log line, the line without
      // its log prefixes ("[rank3]: ", a timestamp) is searched for. Queries are sent in
      // the order they came.
      var owner = window.failpediaSearchOwner;
      sending = sending.then(function () {
        return owner ? owner.match(raw) : null;
      }).then(function (matched) {
        var text = owner && matched ? owner.line(raw, matched) : raw;
        var cleaned = Object.assign({}, message, { data: cleanQuery(text) });
        var search = searches.get(worker);
        if (search) search.queries.push({ raw: raw, cleaned: cleaned.data, matched: matched });
        postMessage.call(worker, cleaned);
      });
    }, pasting ? 0 : 150);
  };
  var sending = Promise.resolve();
  var pasting = false;  // the query comes from a paste or a drop: one event, no keys follow

  // The theme's worker marks the query's words in titles and snippets as they are written
  // in HTML, where a title's "<" is "&lt;": a query holding "lt" or "gt" (or "amp", "quot",
  // "x27") cut such a character reference in two, "&<mark>lt</mark>;", and the result
  // showed "&lt;" instead of "<". A mark inside a character reference is taken out.
  var MARKED_REFERENCE = /&(#?)<mark>(\w+)<\/mark>;/g;
  function unmarkReferences(value) {
    if (typeof value === "string") return value.replace(MARKED_REFERENCE, "&$1$2;");
    if (Array.isArray(value)) return value.map(unmarkReferences);
    return value;
  }
  function unmarked(groups) {
    return groups.map(function (group) {
      return group.map(function (doc) {
        var fixed = Object.assign({}, doc);
        ["title", "text", "tags"].forEach(function (field) {
          if (field in doc) fixed[field] = unmarkReferences(doc[field]);
        });
        return fixed;
      });
    });
  }

  var reordered = new WeakMap();  // answer event -> the event with reordered results
  function reorder(worker, event) {
    var answer = event.data;
    var search = searches.get(worker);
    var isAnswer = answer && answer.type === 3 && answer.data && Array.isArray(answer.data.items);
    if (!(search && isAnswer)) return event;
    if (!reordered.has(event)) {  // once per answer, however many listeners the worker has
      var query = search.queries.shift();
      var found = unmarked(answer.data.items);
      var items = query === undefined ? found : rerank(query.cleaned, found, search.pages);
      var close = items.close || 0;
      var owner = window.failpediaSearchOwner;
      if (owner && query !== undefined) {
        items = owner.arrange(query.raw, items, query.matched, search.pageCount, close);
      }
      var result = Object.assign({}, answer.data, { items: items });
      var data = Object.assign({}, answer, { data: result });
      reordered.set(event, new MessageEvent("message", { data: data }));
    }
    return reordered.get(event);
  }

  var addEventListener = Worker.prototype.addEventListener;
  var removeEventListener = Worker.prototype.removeEventListener;
  var wrappers = new WeakMap();  // listener -> wrapper that hands it the reordered answer
  Worker.prototype.addEventListener = function (type, listener, options) {
    if (type !== "message" || typeof listener !== "function") {
      return addEventListener.apply(this, arguments);
    }
    if (!wrappers.has(listener)) {
      wrappers.set(listener, function (event) {
        return listener.call(this, reorder(this, event));
      });
    }
    return addEventListener.call(this, type, wrappers.get(listener), options);
  };
  Worker.prototype.removeEventListener = function (type, listener, options) {
    var wrapped = type === "message" && wrappers.get(listener);
    return removeEventListener.call(this, type, wrapped || listener, options);
  };

  // The full-text index (search/search_index.json, the largest file of the site) is read
  // only once the search is used: the theme requests it as each page loads, searched or
  // not, and 9.8 offers no setting for when. Its request is held until the reader focuses a
  // search box (the header's, the home page's, the 404 page's; the theme focuses its box
  // for "/", "s", "f", the header's search button and a ?q= address) or types in one; a
  // page opened from a result (?h=, the words to highlight, which need the index) asks at
  // once. Even then it waits for the signature matcher's first answer to be drawn
  // (search-owner.js calls failpediaWantSearchIndex), up to INDEX_DELAY_MS: reading and
  // handing the index to the theme's worker takes the page's main thread for a while, and
  // a pasted message's entry should not wait for that.
  var INDEX_PATH = /\/search\/search_index\.json$/;
  var SEARCH_BOXES = "[data-md-component=search-query], .fp-search-input";
  var INDEX_DELAY_MS = 400;
  var indexWanted = new URL(location.href).searchParams.has("h");
  var heldSends = [];
  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  var isIndex = new WeakSet();
  XMLHttpRequest.prototype.open = function (method, url) {
    var address = new URL(String(url), location.href);
    if (INDEX_PATH.test(address.pathname)) isIndex.add(this);
    else isIndex.delete(this);
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (!indexWanted && isIndex.has(this)) {
      var request = this, args = arguments;
      heldSends.push(function () {
        try {
          send.apply(request, args);
        } catch (error) {  // the theme gave the request up (abort) while it was held
        }
      });
      return undefined;
    }
    return send.apply(this, arguments);
  };
  function wantIndex() {
    if (indexWanted) return;
    indexWanted = true;
    heldSends.splice(0).forEach(function (release) { release(); });
  }
  var used = false;
  function onSearchBox(event) {
    var target = event.target;
    if (used || !(target && target.matches && target.matches(SEARCH_BOXES))) return;
    used = true;
    setTimeout(wantIndex, INDEX_DELAY_MS);
  }
  document.addEventListener("focusin", onSearchBox, true);
  document.addEventListener("input", onSearchBox, true);
  // search-owner.js: the matcher has answered and its answer is drawn (or it has none).
  window.failpediaWantSearchIndex = function () { if (used) wantIndex(); };
  // For tests and the curious: whether the page has asked for the full-text index yet.
  window.failpediaSearchIndexWanted = function () { return indexWanted; };

  document.addEventListener("input", function (event) {
    var input = event.target;
    if (!input || !input.matches || !input.matches("[data-md-component=search-query]")) return;
    pasting = /^insertFrom(Paste|Drop)/.test(event.inputType || "");
    try {
      input.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true }));
    } finally {
      pasting = false;
    }
  });
})();
