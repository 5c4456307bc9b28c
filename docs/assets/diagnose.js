// The "Paste your log" page: hands the pasted text or dropped files to a worker that
// matches them against signatures.json, and shows the findings. Nothing is sent anywhere;
// every piece of log text is put on the page as text, never as HTML.
(function () {
  "use strict";
  var script = document.currentScript;
  var assets = new URL(".", script ? script.src : location.href);
  var worker = null;
  // What each role means, and what the summary line says by role, as signatures.json
  // publishes them (the worker passes them on).
  var roleText = {};
  var starterText = [];
  // The most text the box takes. A textarea lays out every pasted line on the main thread:
  // 300 KB froze the page for half a second, 100 MB for a minute and a half. A bigger log
  // goes through the file picker or a drop, which the worker reads in pieces.
  var MAX_PASTE = 200000;

  function megabytes(count) {
    return (count / 1e6).toFixed(count < 1e7 ? 1 : 0) + " MB";
  }

  function tooBig(root, length) {
    root.querySelector("[data-fp-status]").textContent = "This log is " + megabytes(length) +
      ", too big to paste (at most " + megabytes(MAX_PASTE) + "). Save it to a file and " +
      "choose it with the file picker below, or drop it on this page: files of any size " +
      "are read in pieces, and never leave your browser.";
    root.setAttribute("data-fp-state", "too-big");
  }

  // The longest line a "search this line" link puts in the search box.
  var MAX_QUERY = 200;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function rankRanges(ranks) {
    var parts = [], start = null, previous = null;
    var numbers = ranks.filter(function (r) { return /^[0-9]+$/.test(r); }).map(Number);
    numbers.concat([null]).forEach(function (n) {
      if (start !== null && (n === null || n !== previous + 1)) {
        parts.push(start === previous ? String(start) : start + "-" + previous);
        start = null;
      }
      if (n !== null) { if (start === null) start = n; previous = n; }
    });
    return parts.concat(ranks.filter(function (r) { return !/^[0-9]+$/.test(r); })).join(",");
  }

  // An entry's quick answer (Markdown without HTML) as text: code spans become <code>
  // elements, links their text, emphasis marks are dropped. Every piece is set as text.
  function quickAnswer(summary) {
    var node = element("p", "fp-finding__answer");
    var text = summary.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    var pieces = text.split("`");
    if (pieces.length % 2 === 0) pieces = [text];  // an unpaired backtick: no code spans
    pieces.forEach(function (piece, position) {
      if (position % 2) node.appendChild(element("code", null, piece));
      else node.appendChild(document.createTextNode(piece.replace(/\*\*|__/g, "")));
    });
    return node;
  }

  // When a time was logged: ISO 8601 where the log gives the year, else as written (a
  // glog time has no year, and none is made up for it).
  function timeShown(location) {
    if (location.time) return location.time;
    return location.time_text ? location.time_text + " (no year in the log)" : null;
  }

  // One line of the excerpt: its number, then its text.
  function excerptLine(number, text, className) {
    var line = element("span", className || null);
    line.appendChild(element("span", "fp-ln", String(number)));
    if (text !== null) line.appendChild(document.createTextNode(text));
    return line;
  }

  function showFinding(list, finding, number, siteRoot) {
    var initiating = finding.role === "initiating";
    var item = element("li", "fp-finding " + (initiating ? "fp-finding--initiating" : "fp-finding--downstream"));
    item.setAttribute("data-entry", finding.id);
    var page = new URL(finding.url, siteRoot);
    var head = element("div", "fp-finding__head");
    var title = element("a", "fp-finding__title", number + ". " + finding.title);
    title.href = page.href;
    head.appendChild(title);
    head.appendChild(element("span", "fp-finding__role", roleText[finding.role] || finding.role));
    item.appendChild(head);
    if (finding.summary) item.appendChild(quickAnswer(finding.summary));
    var actions = element("p", "fp-finding__actions");
    var fix = element("a", "fp-finding__fix", "How to fix it");
    fix.href = new URL("#fix", page).href;
    actions.appendChild(fix);
    actions.appendChild(document.createTextNode(" \u00b7 "));
    var more = element("a", "fp-finding__more", "the whole entry");
    more.href = page.href;
    actions.appendChild(more);
    item.appendChild(actions);
    var first = finding.first;
    var where = first.file + ":" + first.line;
    if (first.rank !== null) where += ", rank " + first.rank;
    var when = timeShown(first);
    if (when) where += ", " + when;
    item.appendChild(element("div", "fp-finding__where", "First at " + where));
    var pre = element("pre", "fp-finding__log");
    pre.tabIndex = 0;  // scrolls sideways from the keyboard too
    pre.setAttribute("aria-label", "The lines around the first match");
    first.before.forEach(function (line, position) {
      pre.appendChild(excerptLine(first.line - first.before.length + position, line));
    });
    var hit = excerptLine(first.line, null, "fp-finding__line");
    var chars = Array.from(first.text);  // the match is counted in code points, as by the CLI
    hit.appendChild(document.createTextNode(chars.slice(0, first.match[0]).join("")));
    hit.appendChild(element("mark", null, chars.slice(first.match[0], first.match[1]).join("")));
    hit.appendChild(document.createTextNode(chars.slice(first.match[1]).join("")));
    pre.appendChild(hit);
    first.after.forEach(function (line, position) {
      pre.appendChild(excerptLine(first.line + 1 + position, line));
    });
    item.appendChild(pre);
    if (finding.count > 1 || finding.ranks.length > 1) {
      var spread = finding.ranks.length > 1 ? " on ranks " + rankRanges(finding.ranks) : "";
      item.appendChild(element("div", "fp-finding__count", "Seen " + finding.count + " times" + spread));
    }
    if (finding.root_cause) {
      item.appendChild(element("div", "fp-finding__root",
        "torchrun names this rank as the root cause (first observed failure)"));
    }
    list.appendChild(item);
  }

  function shortened(text, limit) {
    text = text.replace(/\s+/g, " ").trim();
    return text.length <= limit ? text : text.slice(0, limit - 1) + "\u2026";
  }

  // A fenced block that none of the lines can close: its fence is longer than any run of
  // backticks they hold.
  function fenced(lines) {
    var longest = 0;
    lines.forEach(function (line) {
      (line.match(/`+/g) || []).forEach(function (run) { longest = Math.max(longest, run.length); });
    });
    var fence = "`".repeat(Math.max(3, longest + 1));
    return [fence + "text"].concat(lines, [fence]).join("\n");
  }

  // The link that opens the form for a failure no entry knows, with its report field
  // filled in: the form, the field and the limits are those signatures.json publishes
  // (issue_forms, from generator/failpedia/signatures/issue_forms.py).
  function issueUrl(repoUrl, forms, title, body) {
    return repoUrl.replace(/\/+$/, "") + "/issues/new?template=" +
      encodeURIComponent(forms.unknown_failure_form) + "&title=" + encodeURIComponent(title) +
      "&" + encodeURIComponent(forms.report_field) + "=" + encodeURIComponent(body);
  }

  // A new-issue link for a log no entry matched, built here from what the worker redacted
  // (issueParts): nothing is sent anywhere until the reader submits the form on GitHub.
  // The least error-like lines are left out, then the last one shortened, until the link
  // is short enough.
  function newIssueLink(issues, result) {
    if (!issues || !issues.repoUrl || !issues.forms || !result.unmatched.length) return null;
    var forms = issues.forms, maxUrl = forms.max_url_length;
    var items = result.unmatched.map(function (e, position) {
      return { score: e.score, position: position,
               text: shortened(issues.lines[position], forms.max_shown_line) };
    });
    var worst = items.reduce(function (a, b) { return b.score >= a.score ? b : a; });
    var title = shortened(issues.titles[worst.position], forms.max_title_length);
    var names = issues.names.map(function (name) { return "`" + name.replace(/`/g, "'") + "`"; });
    var lines = result.inputs.reduce(function (sum, input) { return sum + input.lines; }, 0);
    function body(kept) {
      return [
        "<!-- Filled in by the site's log page. Home folders and what looks like a token are " +
          "redacted: read it before posting. -->",
        "",
        "### What failed",
        "",
        "No entry matched " + names.join(", ") + " (" + lines + " lines) on the site's log " +
          "page. The most error-like lines:",
        "",
        fenced(kept.map(function (item) { return item.text; })),
        "",
        "### Environment",
        "",
        "The log page does not see it: on the machine where it failed, `failpedia report LOG` " +
          "prints this report with the environment (Python, OS, torch, CUDA, NCCL, GPU, driver).",
        "",
      ].join("\n");
    }
    var kept = items.slice();
    var url = issueUrl(issues.repoUrl, forms, title, body(kept));
    while (url.length > maxUrl && kept.length > 1) {
      var least = kept.reduce(function (a, b) { return b.score < a.score ? b : a; });
      kept.splice(kept.indexOf(least), 1);
      url = issueUrl(issues.repoUrl, forms, title, body(kept));
    }
    while (url.length > maxUrl && kept[0].text.length > 40) {
      kept[0] = { text: shortened(kept[0].text, Math.floor(kept[0].text.length / 2)) };
      url = issueUrl(issues.repoUrl, forms, title, body(kept));
    }
    return url.length <= maxUrl ? url : null;
  }

  function show(root, result, issues) {
    var out = root.querySelector("[data-fp-results]");
    out.textContent = "";
    var siteRoot = new URL("../", assets);
    var count = result.findings.length;
    (result.warnings || []).forEach(function (warning) {
      out.appendChild(element("p", "fp-warning", "Note: " + warning + "."));
    });
    var found = count + " known failure" + (count === 1 ? "" : "s") + " found";
    var where = result.inputs.length > 1 ? "these logs" : "this log";
    if (!count) out.appendChild(element("p", "fp-summary", "No known failure found in " + where + "."));
    else {
      // The summary line, in the words of the first role among the findings in the table
      // signatures.json publishes (order.starter_text, which failpedia diagnose words it
      // with); past the first row, the failure that started it is not among them.
      var roles = result.findings.map(function (f) { return f.role; });
      var row = starterText.filter(function (item) { return roles.indexOf(item[0]) !== -1; })[0];
      var first = starterText.length ? starterText[0] : null;
      var said = row ? row[count === 1 ? 1 : 2].split("{where}").join(where) : first ? first[1] : "";
      var elsewhere = row && row !== first;
      out.appendChild(element("p", "fp-summary" + (elsewhere ? " fp-summary--elsewhere" : ""),
        found + "; " + said));
    }
    var list = element("ol", "fp-findings");
    result.findings.forEach(function (f, i) { showFinding(list, f, i + 1, siteRoot); });
    out.appendChild(list);
    if (!count && result.unmatched.length) {
      out.appendChild(element("p", null, "The most error-like lines (no entry matches them):"));
      var pre = element("pre", "fp-unmatched");
      pre.tabIndex = 0;  // scrolls sideways from the keyboard too
      result.unmatched.forEach(function (e) {
        pre.appendChild(document.createTextNode(e.file + ":" + e.line + ": " + e.text + " "));
        pre.appendChild(searchLink(e.text, siteRoot));
        pre.appendChild(document.createTextNode("\n"));
      });
      out.appendChild(pre);
    }
    if (!count && result.nearest && result.nearest.length) {
      out.appendChild(element("p", "fp-nearest-heading",
        "Not matches, only the entries nearest in wording to these lines:"));
      var near = element("ul", "fp-nearest");
      result.nearest.forEach(function (n) {
        var item = element("li");
        var link = element("a", null, n.title);
        link.href = new URL(n.url, siteRoot).href;
        item.appendChild(link);
        item.appendChild(element("code", "fp-nearest-id", n.id));
        near.appendChild(item);
      });
      out.appendChild(near);
    }
    var url = count ? null : newIssueLink(issues, result);
    if (url) {
      var offer = element("p", "fp-report", "No entry knows this failure yet. ");
      var link = element("a", "fp-report-link", "Report it on GitHub");
      link.href = url;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      offer.appendChild(link);
      offer.appendChild(document.createTextNode(
        ": the issue form opens with these lines filled in, home folders and tokens removed. " +
        "Nothing is sent until you submit it there."));
      out.appendChild(offer);
    }
    var copy = element("p", "fp-copy");
    var button = element("button", "md-button", "Copy the diagnosis as Markdown");
    button.type = "button";
    button.setAttribute("data-fp-copy", "");
    var copied = element("span", "fp-copy__status");
    copied.setAttribute("role", "status");
    button.addEventListener("click", function () {
      var text = asMarkdown(out, result, siteRoot);
      var written = navigator.clipboard && navigator.clipboard.writeText
        ? navigator.clipboard.writeText(text) : Promise.reject(new Error("no clipboard"));
      written.then(function () { copied.textContent = " Copied."; },
                   function () { copied.textContent = " The browser refused the clipboard."; });
    });
    copy.appendChild(button);
    copy.appendChild(copied);
    out.appendChild(copy);
    window.failpediaDiagnosis = result;
    root.setAttribute("data-fp-state", "done");
    // The answer takes the place of the log: the box folds away (one click brings it
    // back) and the results scroll into view.
    root.setAttribute("data-fp-folded", "");
    out.scrollIntoView({ block: "start" });
  }

  // A link that opens the site's search with one log line (the search box reads ?q=).
  function searchLink(line, siteRoot) {
    var link = element("a", "fp-search-line", "search this line");
    var query = new URL(siteRoot.href);
    query.searchParams.set("q", shortened(line, MAX_QUERY));
    link.href = query.href;
    return link;
  }

  // The diagnosis as Markdown, for an issue or a chat: the summary line, each finding with
  // its entry's link, quick answer and first line, or, when none matched, the nearest
  // entries (marked as not matches) and the most error-like lines.
  function asMarkdown(out, result, siteRoot) {
    var parts = [];
    var summary = out.querySelector(".fp-summary");
    if (summary) parts.push("**" + summary.textContent + "**", "");
    result.findings.forEach(function (f, i) {
      var url = new URL(f.url, siteRoot).href;
      parts.push((i + 1) + ". [" + f.title.replace(/[\[\]]/g, "") + "](" + url + ") (`" + f.id +
        "`, " + (roleText[f.role] || f.role) + ")");
      if (f.summary) parts.push("   " + f.summary.replace(/\s+/g, " ").trim());
      parts.push("   First at " + f.first.file + ":" + f.first.line + ":",
                 fenced([f.first.text]).split("\n").map(function (l) { return "   " + l; }).join("\n"));
    });
    if (!result.findings.length && result.nearest && result.nearest.length) {
      parts.push("Not matches, only the entries nearest in wording to these lines:", "");
      result.nearest.forEach(function (n) {
        parts.push("- [" + n.title.replace(/[\[\]]/g, "") + "](" + new URL(n.url, siteRoot).href +
          ") (`" + n.id + "`)");
      });
    }
    if (!result.findings.length && result.unmatched.length) {
      parts.push("", "The most error-like lines:", "",
                 fenced(result.unmatched.map(function (e) { return e.file + ":" + e.line + ": " + e.text; })));
    }
    return parts.join("\n") + "\n";
  }

  function run(root, request) {
    if (worker) worker.terminate();
    worker = new Worker(new URL("diagnose-worker.js", assets));
    var status = root.querySelector("[data-fp-status]");
    root.setAttribute("data-fp-state", "running");
    status.textContent = "Matching…";
    worker.onmessage = function (event) {
      var message = event.data;
      if (message.type === "progress") {
        status.textContent = "Matching… " + Math.round(100 * message.bytes / Math.max(message.size, 1)) + "%";
      } else if (message.type === "done") {
        status.textContent = "";
        roleText = message.roleText || {};
        starterText = message.starterText || [];
        show(root, message.result, message.issues);
      } else if (message.type === "error") {
        status.textContent = "Could not read this log: " + message.message;
        root.setAttribute("data-fp-state", "error");
      }
    };
    request.indexUrl = new URL("../signatures.json", assets).href;
    request.nearest = true;
    worker.postMessage(request);
  }

  function init() {
    var root = document.getElementById("failpedia-diagnose");
    if (!root || root.getAttribute("data-fp-ready")) return;
    root.setAttribute("data-fp-ready", "1");
    var text = root.querySelector("textarea");
    var files = root.querySelector("input[type=file]");
    text.addEventListener("paste", function (event) {
      var pasted = event.clipboardData ? event.clipboardData.getData("text/plain") : "";
      var kept = text.value.length - Math.abs(text.selectionEnd - text.selectionStart);
      if (kept + pasted.length > MAX_PASTE) {
        event.preventDefault();  // never laid out in the box
        tooBig(root, kept + pasted.length);
      }
    });
    function runPasted() {
      if (text.value.length > MAX_PASTE) tooBig(root, text.value.length);
      else run(root, { text: text.value, name: "pasted log" });
    }
    root.querySelector("[data-fp-run]").addEventListener("click", runPasted);
    text.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        runPasted();
      }
    });
    root.querySelector("[data-fp-unfold]").addEventListener("click", function () {
      root.removeAttribute("data-fp-folded");
      text.focus();
    });
    files.addEventListener("change", function () {
      if (files.files.length) run(root, { files: Array.from(files.files) });
    });
    // Files dropped anywhere on the tool (the box included) are read as files.
    var dragging = 0;
    root.addEventListener("dragenter", function (event) {
      event.preventDefault();
      dragging += 1;
      root.setAttribute("data-fp-dragging", "");
    });
    root.addEventListener("dragleave", function () {
      dragging = Math.max(0, dragging - 1);
      if (!dragging) root.removeAttribute("data-fp-dragging");
    });
    root.addEventListener("dragover", function (event) { event.preventDefault(); });
    root.addEventListener("drop", function (event) {
      event.preventDefault();
      dragging = 0;
      root.removeAttribute("data-fp-dragging");
      if (event.dataTransfer.files.length) run(root, { files: Array.from(event.dataTransfer.files) });
    });
  }

  if (window.document$ && window.document$.subscribe) window.document$.subscribe(init);
  else document.addEventListener("DOMContentLoaded", init);
  init();
})();
