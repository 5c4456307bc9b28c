// Match a log against signatures.json, entirely in this worker: the log never leaves the
// browser. The rules are those of `failpedia diagnose` (generator/failpedia/diagnose/),
// and every line-reading rule and limit comes from signatures.json itself
// (generator/failpedia/signatures/line_rules.py publishes them), so the page and the
// command line read every line the same way and report the same findings in the same
// order.
"use strict";

var CHUNK_BYTES = 4 << 20;

var index = null;
var loading = null;  // the promise of signatures.json, read and compiled
var rules = null;
var order = null;

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\\/-]/g, "\\$&");
}

// A signature pattern, compiled with the "u" flag: like Python, the engine then reads a line
// as code points (a character outside the BMP is one character to ".", to a negated class
// and to a count), and the dialect's canonical form is valid in that mode. Null where this
// browser cannot compile it: that pattern is skipped, never every other one with it.
function compilePattern(source) {
  try {
    return new RegExp(source, "u");
  } catch (error) {
    return null;
  }
}

// The first `cap` characters of `text`, counted as Python counts them: in code points.
function capText(text, cap) {
  if (text.length <= cap) return text;
  var units = 0;
  for (var count = 0; count < cap && units < text.length; count++) {
    var code = text.charCodeAt(units);
    var pair = code >= 0xd800 && code <= 0xdbff && units + 1 < text.length &&
      (text.charCodeAt(units + 1) & 0xfc00) === 0xdc00;
    units += pair ? 2 : 1;
  }
  return text.slice(0, units);
}

// Python's str.strip(BLANK) and its halves, for the rules' ASCII whitespace.
function isBlankChar(text, position) {
  return rules.blank.indexOf(text[position]) !== -1;
}
function isBlank(text) {
  for (var i = 0; i < text.length; i++) if (!isBlankChar(text, i)) return false;
  return true;
}
function stripBlank(text, left, right) {
  var start = 0, end = text.length;
  while (left && start < end && isBlankChar(text, start)) start++;
  while (right && end > start && isBlankChar(text, end - 1)) end--;
  return text.slice(start, end);
}

// Code points before `units` UTF-16 units of `text`: where Python counts a match to start.
function codePoints(text, units) {
  var count = 0;
  for (var i = 0; i < units; i++) {
    var code = text.charCodeAt(i);
    if (code < 0xdc00 || code > 0xdfff || i === 0 ||
        (text.charCodeAt(i - 1) & 0xfc00) !== 0xd800) count++;
  }
  return count;
}

function compileIndex(data) {
  var r = data.rules;
  order = data.order;
  order.keys.forEach(function (key) {
    if (!ORDER_KEYS[key]) throw new Error("this page cannot sort findings by " + key);
  });
  rules = {
    cap: r.line_cap,
    blank: r.blank,
    maxPrefixes: r.max_prefixes,
    ansi: new RegExp(r.ansi, "g"),
    // "d": where each group matched, for the time as the log wrote it. Each rule says what
    // each of its groups reads: "rank", or a part of a time.
    prefixes: r.prefixes.map(function (rule) {
      return { regex: new RegExp(rule[1], "d"), groups: rule[2] || [] };
    }),
    rootMarker: r.root_cause_marker,
    errorLike: r.error_like.map(function (item) { return [item[0], new RegExp(item[1])]; }),
    rootRank: new RegExp(r.root_cause_rank),
    rootEnd: new RegExp(r.root_cause_end),
    rootLines: r.root_cause_lines,
    contextLines: r.context_lines,
    maxErrorLines: r.max_error_lines,
    maxLocations: r.max_locations,
    maxCarry: r.max_carry,
    // Absent from an index built before it: no rank from a file's name.
    rankInName: r.rank_in_name ? new RegExp(r.rank_in_name, "i") : null,
  };
  var literals = [rules.rootMarker];
  var warnings = [];
  var entries = data.entries.map(function (entry, position) {
    var patterns = [];
    entry.patterns.forEach(function (pattern) {
      var regex = compilePattern(pattern.source);
      if (!regex) {
        warnings.push("this browser cannot compile a signature pattern of " + entry.id +
                      "; that pattern is skipped");
        return;
      }
      pattern.literals.forEach(function (literal) { literals.push(literal); });
      patterns.push({ regex: regex, literals: pattern.literals });
    });
    return { data: entry, position: position, patterns: patterns };
  });
  r.error_like.forEach(function (item) {
    item[2].forEach(function (word) { literals.push(word); });
  });
  literals.sort(function (a, b) { return b.length - a.length; });
  index = {
    siteUrl: data.site_url,
    warnings: warnings,
    // Where an issue about an unknown failure goes, and what is removed from it first.
    repoUrl: data.repo_url || "",
    issueForms: data.issue_forms || null,
    redact: redactor(r.redactions),
    entries: entries,
    probe: new RegExp(literals.map(escapeRegExp).join("|"), "g"),
  };
}

// The redaction policy signatures.json publishes (generator/failpedia/signatures/
// redaction.py, which failpedia report and the runner apply too): a match of
// (keep)(?:secret) becomes what keep matched, the replacement, then the line breaks the
// secret held; a match that `unless` matches stays. Null where the index carries no rules
// or this browser cannot compile one of them: then no log text goes into a link.
function redactor(list) {
  if (!Array.isArray(list) || !list.length) return null;
  var compiled = [];
  for (var i = 0; i < list.length; i++) {
    var rule = list[i];
    if (!rule || typeof rule.keep !== "string" || typeof rule.secret !== "string" ||
        typeof rule.replacement !== "string") return null;
    try {
      compiled.push({
        regex: new RegExp("(" + rule.keep + ")(?:" + rule.secret + ")", "gu"),
        unless: rule.unless ? new RegExp(rule.unless, "u") : null,
        replacement: rule.replacement,
      });
    } catch (error) {
      return null;
    }
  }
  return function (text) {
    compiled.forEach(function (rule) {
      text = text.replace(rule.regex, function (match, kept) {
        if (rule.unless && rule.unless.test(match)) return match;
        var breaks = match.slice(kept.length).split("\n").length - 1;
        return kept + rule.replacement + "\n".repeat(breaks);
      });
    });
    return text;
  };
}

// What a new-issue link may carry of a result, redacted: each unmatched line as
// "file:line: text" and as its text alone (a title), and the inputs' names, with the form
// it fills and that form's limits. Null where there is nowhere to send it, nothing to
// redact it with, or no form named.
function issueParts(result) {
  if (!index.repoUrl || !index.redact || !index.issueForms) return null;
  var redact = index.redact;
  return {
    repoUrl: index.repoUrl,
    forms: index.issueForms,
    lines: result.unmatched.map(function (e) {
      return redact(e.file + ":" + e.line + ": " + e.text);
    }),
    titles: result.unmatched.map(function (e) { return redact(e.text); }),
    names: result.inputs.map(function (input) { return redact(input.name); }),
  };
}

function stripAnsi(text) {
  return text.indexOf("\x1b") === -1 ? text : text.replace(rules.ansi, "");
}

function offsetMinutes(zone) {
  if (!zone || zone === "Z") return 0;
  var digits = zone.slice(1).replace(":", "");
  var minutes = parseInt(digits.slice(0, 2), 10) * 60 + parseInt(digits.slice(2, 4), 10);
  return zone[0] === "-" ? -minutes : minutes;
}

// A time prefix's text in the log: from its first group to the end of its last.
function written(match) {
  var end = 0;
  for (var i = 1; i < match.indices.length; i++) {
    if (match.indices[i]) end = Math.max(end, match.indices[i][1]);
  }
  return match.input.slice(match.indices[1][0], end);
}

// The time a prefix's groups give (parts: group values by what they read).
function logTime(parts, match) {
  return { year: parts.year === undefined ? null : +parts.year, month: +parts.month,
           day: +parts.day, hour: +parts.hour, minute: +parts.minute, second: +parts.second,
           fraction: parts.fraction || "", offset: offsetMinutes(parts.zone),
           written: written(match) };
}

// A segment's prefixes stripped, one after another; the first rank and the first time
// they give are the segment's.
function parseSegment(raw) {
  var text = raw, rank = null, time = null;
  for (var round = 0; round < rules.maxPrefixes; round++) {
    var applied = false;
    for (var i = 0; i < rules.prefixes.length; i++) {
      var rule = rules.prefixes[i];
      var match = rule.regex.exec(text);
      if (!match || match[0].length === 0) continue;
      var parts = {};
      rule.groups.forEach(function (part, group) { parts[part] = match[group + 1]; });
      if ("rank" in parts) {
        var found = parts.rank;
        if (rank === null && found !== undefined) {
          rank = /^[0-9]+$/.test(found) ? String(parseInt(found, 10)) : found;
        }
      } else if ("month" in parts && time === null) {
        time = logTime(parts, match);
      }
      text = text.slice(match[0].length);
      applied = true;
      break;
    }
    if (!applied) break;
  }
  return { text: capText(text, rules.cap), rank: rank, time: time };
}

function splitLine(line) {
  return stripAnsi(line).split("\r").filter(function (part) { return !isBlank(part); })
    .map(parseSegment);
}

function displayText(line) {
  var parts = stripAnsi(line).split("\r").filter(function (part) { return !isBlank(part); });
  return capText(stripBlank(parts.length ? parts[parts.length - 1] : "", false, true), rules.cap);
}

function timeSeconds(time, year) {
  if (!time) return null;
  var y = time.year === null ? year : time.year;
  var base = Date.UTC(y, time.month - 1, time.day, time.hour, time.minute, time.second) / 1000;
  if (isNaN(base)) base = 0;
  var fraction = time.fraction ? parseInt(time.fraction, 10) / Math.pow(10, time.fraction.length) : 0;
  return base - time.offset * 60 + fraction;
}

// A time in ISO 8601, UTC, where the log gives its year; null where it gives none.
function isoTime(time) {
  if (!time || time.year === null) return null;
  return formatTime(timeSeconds(time, time.year));
}

function formatTime(seconds) {
  if (seconds === null) return null;
  var whole = Math.floor(seconds);
  var text = new Date(whole * 1000).toISOString().slice(0, 19);
  var millis = Math.round((seconds - whole) * 1000);
  return millis ? text + "." + String(Math.min(millis, 999)).padStart(3, "0") + "Z" : text + "Z";
}

function newState(context) {
  return { context: context, findings: new Map(), rootRanks: new Set(), rootBlocks: new Set(),
           errors: [], inputs: [] };
}

// One input: complete lines arrive in chunks; lines needing following context wait.
function Reader(state, source, name, rank) {
  this.state = state; this.source = source; this.name = name; this.rank = rank;
  this.lineNo = 0; this.tail = []; this.waiting = []; this.carry = ""; this.bytes = 0;
  this.after = Math.max(state.context, rules.rootLines);
}

// Text up to the last line end is read; the unfinished line is carried on to the next
// piece, and past rules.maxCarry it is cut after its last "\r" (a progress bar redrawn for
// hours), or anywhere, as the CLI cuts it: each piece is read as part of its line, with
// its line's number and the context of its line, and the carry, memory and work stay
// bounded.
Reader.prototype.push = function (text, done) {
  var newline = text.lastIndexOf("\n");  // the carry holds none: only the new text is searched
  var data = this.carry + text;
  var cut = done ? data.length : newline === -1 ? 0 : this.carry.length + newline + 1;
  if (!cut && data.length > rules.maxCarry) {
    cut = data.lastIndexOf("\r") + 1 || data.length;
    var code = data.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff && cut < data.length) cut -= 1;  // keep a pair whole
  }
  this.carry = data.slice(cut);
  data = data.slice(0, cut);
  if (!data) return;
  var lines = data.split("\n");
  if (data.endsWith("\n")) lines.pop();
  var unfinished = !done && !data.endsWith("\n");  // the start of a line cut in pieces
  var complete = unfinished ? lines.slice(0, -1) : lines;
  this.feedWaiting(complete);
  this.scanLines(lines, data, complete.length);
  var ctx = this.state.context;
  this.tail = ctx ? this.tail.concat(complete.slice(-ctx)).slice(-ctx) : [];
  this.lineNo += complete.length;
};

Reader.prototype.feedWaiting = function (lines) {
  for (var i = 0; i < this.waiting.length; i++) {
    var hit = this.waiting[i];
    var take = lines.slice(0, hit.missing);
    hit.after = hit.after.concat(take);
    hit.missing -= take.length;
  }
  this.flush(false);
};

Reader.prototype.flush = function (all) {
  while (this.waiting.length && (all || this.waiting[0].missing <= 0)) {
    this.handle(this.waiting.shift());
  }
};

// Hits among `lines` (the first `complete` of them whole, any other the start of a line cut
// in pieces), each with the lines before it and those after it that are known whole.
Reader.prototype.scanLines = function (lines, data, complete) {
  var clean = stripAnsi(data);
  var probe = index.probe;
  probe.lastIndex = 0;
  var starts = [];
  var match;
  var lastStart = -1;
  while ((match = probe.exec(clean)) !== null) {
    var start = clean.lastIndexOf("\n", match.index) + 1;
    if (start !== lastStart) { starts.push(start); lastStart = start; }
    var next = clean.indexOf("\n", match.index);
    if (next === -1) break;
    probe.lastIndex = next + 1;
  }
  if (!starts.length) return;
  // Map each candidate line start to its line number in this chunk.
  var position = 0, number = 0;
  for (var s = 0; s < starts.length; s++) {
    while (position < starts[s]) {
      var newline = clean.indexOf("\n", position);
      if (newline === -1 || newline >= starts[s]) break;
      number++;
      position = newline + 1;
    }
    var line = lines[number];
    var ctx = this.state.context;
    var before = number >= ctx ? lines.slice(number - ctx, number)
      : this.tail.slice(Math.max(0, this.tail.length - (ctx - number))).concat(lines.slice(0, number));
    var after = lines.slice(number + 1, Math.min(number + 1 + this.after, complete));
    var hit = { lineNo: this.lineNo + number + 1, text: line, before: before, after: after,
                missing: this.after - after.length };
    if (hit.missing > 0 || this.waiting.length) this.waiting.push(hit);
    else this.handle(hit);
  }
};

Reader.prototype.handle = function (hit) {
  var text = stripAnsi(hit.text);
  if (text.indexOf(rules.rootMarker) !== -1) readRootCause(this.state, this.source, hit);
  collectErrorLines(this.state, this.source, this.name, this.rank, hit);
  matchHit(this.state, this.source, this.name, this.rank, hit);
};

Reader.prototype.finish = function () {
  this.push("", true);
  this.flush(true);
};

function readRootCause(state, source, hit) {
  for (var i = 0; i < hit.after.length; i++) {
    var text = parseSegment(displayText(hit.after[i])).text;
    state.rootBlocks.add(source + ":" + (hit.lineNo + i + 1));
    if (rules.rootEnd.test(text)) break;
    var match = rules.rootRank.exec(text);
    if (match) {
      state.rootRanks.add(match[1]);
      if (match[2] !== undefined) state.rootRanks.add(match[2]);
    }
  }
}

function collectErrorLines(state, source, name, rank, hit) {
  splitLine(hit.text).forEach(function (segment, number) {
    var score = 0;
    rules.errorLike.forEach(function (item) {
      if (item[0] > score && item[1].test(segment.text)) score = item[0];
    });
    if (!score) return;
    state.errors.push({ score: score, order: [source, hit.lineNo, number], file: name,
                        line: hit.lineNo, rank: segment.rank !== null ? segment.rank : rank,
                        text: stripBlank(segment.text, true, true) });
    if (state.errors.length > rules.maxErrorLines * 20) trimErrors(state);
  });
}

function compareOrder(a, b) {
  for (var i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

function trimErrors(state) {
  state.errors.sort(function (a, b) { return b.score - a.score || compareOrder(b.order, a.order); });
  state.errors = state.errors.slice(0, rules.maxErrorLines);
}

function matchHit(state, source, name, rank, hit) {
  var text = stripAnsi(hit.text);
  var candidates = index.entries.filter(function (entry) {
    return entry.patterns.some(function (pattern) {
      return pattern.literals.some(function (literal) { return text.indexOf(literal) !== -1; });
    });
  });
  if (!candidates.length) return;
  var segments = splitLine(hit.text);
  candidates.forEach(function (entry) {
    segments.forEach(function (segment, number) {
      var found = null;
      for (var i = 0; i < entry.patterns.length && !found; i++) {
        found = entry.patterns[i].regex.exec(segment.text);
      }
      if (!found) return;
      var finding = state.findings.get(entry.position);
      if (!finding) {
        finding = { entry: entry.data, position: entry.position, count: 0, ranks: new Set(),
                    locations: [], inRootBlock: false, minYear: null, opening: new Map(),
                    earliest: new Map() };
        state.findings.set(entry.position, finding);
      }
      var context = state.context;
      addOccurrence(finding, state.rootBlocks.has(source + ":" + hit.lineNo), {
        source: source, file: name, line: hit.lineNo, segment: number,
        rank: segment.rank !== null ? segment.rank : rank, time: segment.time,
        text: segment.text,
        match: [codePoints(segment.text, found.index),
                codePoints(segment.text, found.index + found[0].length)],
        before: context ? hit.before.slice(-context).map(displayText) : [],
        after: context ? hit.after.slice(0, context).map(displayText) : [],
      });
    });
  });
}

// A year-less time is compared in the year assumed at the end; only whether that year is a
// leap year changes how two such times compare, so the earliest under each is kept.
var LEAP_YEAR = 2000, COMMON_YEAR = 1970;

function isLeap(year) {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

// Count an occurrence, which comes after every one counted before in its input, keeping
// what the result needs (as the CLI's Finding.add): the count and ranks, the first
// locations, and, for each input, the candidates for the first: its first occurrence and
// its earliest in time. Memory stays flat however many lines match.
function addOccurrence(finding, inRootBlock, item) {
  finding.count += 1;
  if (item.rank !== null) finding.ranks.add(item.rank);
  finding.inRootBlock = finding.inRootBlock || inRootBlock;
  if (finding.locations.length < rules.maxLocations) finding.locations.push(item);
  if (!finding.opening.has(item.source)) finding.opening.set(item.source, item);
  var time = item.time;
  if (!time) return;
  if (time.year !== null) {
    if (finding.minYear === null || time.year < finding.minYear) finding.minYear = time.year;
    keepEarliest(finding, "dated", 0, item);
  } else {
    keepEarliest(finding, "leap", LEAP_YEAR, item);
    keepEarliest(finding, "common", COMMON_YEAR, item);
  }
}

function keepEarliest(finding, kind, year, item) {
  var key = item.source + ":" + kind;
  var best = finding.earliest.get(key);
  if (!best || timeSeconds(item.time, year) < timeSeconds(best.time, year)) {
    finding.earliest.set(key, item);
  }
}

// The earliest occurrence and the time it is ordered by (null: none), as the CLI's
// Finding.first_of: in one input, its first occurrence where that has no time, else its
// earliest time; across inputs, the earliest time, then the order of the inputs.
function firstOf(finding, year) {
  var kinds = ["dated", isLeap(year) ? "leap" : "common"];
  var best = null, bestKey = null;
  finding.opening.forEach(function (opening, source) {
    var earliest = null, earliestSeconds = null;
    kinds.forEach(function (kind) {
      var item = finding.earliest.get(source + ":" + kind);
      if (!item) return;
      var seconds = timeSeconds(item.time, year);
      if (!earliest || seconds < earliestSeconds || (seconds === earliestSeconds &&
          compareOrder([item.line, item.segment, 0], [earliest.line, earliest.segment, 0]) < 0)) {
        earliest = item; earliestSeconds = seconds;
      }
    });
    var first = earliest === null || opening.time === null ? opening : earliest;
    var key = [earliest === null ? Infinity : earliestSeconds,
               [first.source, first.line, first.segment]];
    if (!best || key[0] < bestKey[0] || (key[0] === bestKey[0] && compareOrder(key[1], bestKey[1]) < 0)) {
      best = first; bestKey = key;
    }
  });
  return { item: best, seconds: bestKey[0] === Infinity ? null : bestKey[0] };
}

function sortRanks(ranks) {
  return Array.from(ranks).sort(function (a, b) {
    var an = /^[0-9]+$/.test(a), bn = /^[0-9]+$/.test(b);
    if (an && bn) return parseInt(a, 10) - parseInt(b, 10);
    if (an !== bn) return an ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

function finish(state) {
  var findings = Array.from(state.findings.values());
  var years = [];
  findings.forEach(function (finding) {
    if (finding.minYear !== null) years.push(finding.minYear);
  });
  var year = years.length ? Math.min.apply(null, years) : order.default_year;
  findings.forEach(function (finding) {
    var first = firstOf(finding, year);
    finding.first = first.item;
    finding.firstTime = first.seconds;
    finding.rootCause = finding.inRootBlock || Array.from(finding.ranks).some(function (rank) {
      return state.rootRanks.has(rank);
    });
  });
  // Causal level: one more than the deepest found entry that causes this one.
  var found = new Set(findings.map(function (f) { return f.entry.id; }));
  var edges = [];
  findings.forEach(function (f) {
    f.entry.causes.forEach(function (t) { if (found.has(t)) edges.push([f.entry.id, t]); });
    f.entry.caused_by.forEach(function (s) { if (found.has(s)) edges.push([s, f.entry.id]); });
  });
  var unique = {};
  edges.forEach(function (e) { unique[e[0] + "\u0000" + e[1]] = e; });
  edges = Object.keys(unique).sort().map(function (k) { return unique[k]; });
  var level = {};
  found.forEach(function (id) { level[id] = 0; });
  for (var round = 0; round < found.size; round++) {
    var changed = false;
    edges.forEach(function (e) {
      if (level[e[1]] < level[e[0]] + 1 && level[e[0]] + 1 <= found.size) {
        level[e[1]] = level[e[0]] + 1; changed = true;
      }
    });
    if (!changed) break;
  }
  var sources = new Set(edges.map(function (e) { return e[0]; }));
  findings.forEach(function (f) {
    f.level = level[f.entry.id];
    f.leads = sources.has(f.entry.id);
  });
  findings.sort(function (a, b) {
    for (var i = 0; i < order.keys.length; i++) {
      var compared = ORDER_KEYS[order.keys[i]](a, b);
      if (compared) return compared;
    }
    return 0;
  });
  trimErrors(state);
  var errors = findings.length ? [] : state.errors.slice().sort(function (a, b) {
    return compareOrder(a.order, b.order);
  });
  return {
    format: 1,
    inputs: state.inputs,
    findings: findings.map(function (f) { return findingJson(f); }),
    unmatched: errors.map(function (e) {
      return { file: e.file, line: e.line, rank: e.rank, score: e.score, text: e.text };
    }),
    nearest: [],
    warnings: index.warnings.slice(),
  };
}

// How each key that signatures.json lists (order.keys, in the order findings are sorted
// by) compares two findings, as generator/failpedia/diagnose/ordering.py computes it.
var ORDER_KEYS = {
  survived_alone: function (a, b) { return survivedAlone(a) - survivedAlone(b); },
  role: function (a, b) { return rankOf(order.roles, a.entry.role) - rankOf(order.roles, b.entry.role); },
  causal_level: function (a, b) { return a.level - b.level; },
  kind: function (a, b) { return rankOf(order.kinds, a.entry.kind) - rankOf(order.kinds, b.entry.kind); },
  root_cause: function (a, b) { return (a.rootCause ? 0 : 1) - (b.rootCause ? 0 : 1); },
  first_time: function (a, b) { return compareTimes(a.firstTime, b.firstTime); },
  first_place: function (a, b) {
    return compareOrder([a.first.source, a.first.line, a.first.segment],
                        [b.first.source, b.first.line, b.first.segment]);
  },
  first_match_length: function (a, b) {
    return (b.first.match[1] - b.first.match[0]) - (a.first.match[1] - a.first.match[0]);
  },
};

// 1 for a failure the run survives that causes no other finding, else 0.
function survivedAlone(finding) {
  return rankOf(order.kinds, finding.entry.kind) > 0 && !finding.leads ? 1 : 0;
}

// A role's or a kind's rank; one the table does not know ranks first, as in Python.
function rankOf(table, name) {
  return Object.prototype.hasOwnProperty.call(table, name) ? table[name] : 0;
}

// The entries nearest in wording to the most error-like lines, where no signature matched:
// ranked over nearest.json (each term's entries and weights, from the lunr index lunr's
// Python port built) with the query, the scores and the order that
// generator/failpedia/signatures/nearest_rules.py defines and publishes in that file, so
// the page lists what `failpedia diagnose` lists. Loaded only when first needed.
var nearestLoading = null;

// nearest.json, read once (null where it is of another format), and lunr.js, whose stemmer
// stems the query's words as the index's were.
function loadNearest(url) {
  nearestLoading = nearestLoading || fetch(url).then(function (response) {
    return response.json();
  }).then(function (data) {
    if (data.format !== 3) return null;
    if (typeof lunr === "undefined") {
      importScripts(new URL("vendor/lunr.min.js", self.location.href).href);
    }
    return { rules: data.rules, ids: data.ids, terms: data.terms };
  }).catch(function () { return null; });  // no nearest entries, and matching goes on
  return nearestLoading;
}

// Each entry's score for the query's stems, as nearest_rules.scores computes it: the sum
// of each stem's count times its weight in the entry, over the query vector's length.
function nearestScores(terms, stems) {
  var counts = new Map();
  stems.forEach(function (stem) {
    if (Object.prototype.hasOwnProperty.call(terms, stem)) counts.set(stem, (counts.get(stem) || 0) + 1);
  });
  var squares = 0;
  counts.forEach(function (count) { squares += count * count; });
  var length = Math.sqrt(squares);
  var found = new Map();
  counts.forEach(function (count, stem) {
    var held = terms[stem];
    for (var i = 0; i < held.length; i += 2) {
      found.set(held[i], (found.get(held[i]) || 0) + count * held[i + 1]);
    }
  });
  var scored = [];
  found.forEach(function (total, entry) { scored.push({ entry: entry, score: total / length }); });
  return scored;
}

// The ids of the entries nearest in wording to `unmatched` (the lines of the highest
// error-like score count), with their scores, in the shared order, from `nearest` (what
// loadNearest read). `anyScore`: the lines are looked up however little they read as
// errors (site search's query, pasted from a log).
function nearestIds(nearest, unmatched, anyScore) {
  if (!unmatched.length) return [];
  var r = nearest.rules;
  var top = Math.max.apply(null, unmatched.map(function (item) { return item.score; }));
  if (top < r.min_query_score && !anyScore) return [];
  var term = new RegExp(r.term, "g"), terms = [];
  unmatched.forEach(function (item) {
    if (item.score !== top) return;
    (item.text.match(term) || []).forEach(function (found) {
      found = found.toLowerCase();
      if (terms.length < r.max_query_terms && terms.indexOf(found) === -1) terms.push(found);
    });
  });
  if (!terms.length) return [];
  var stems = terms.map(function (word) { return lunr.stemmer(new lunr.Token(word)).toString(); });
  var scale = Math.pow(10, r.score_digits);
  return nearestScores(nearest.terms, stems).filter(function (item) {
    return item.entry >= 0 && item.entry < nearest.ids.length;
  }).map(function (item) {
    return { id: nearest.ids[item.entry], score: Math.floor(item.score * scale + 0.5) / scale };
  }).sort(function (a, b) {
    return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  });
}

// The log page's nearest entries: the first `max_nearest` of those ids that signatures.json
// lists, as listed-entries.js lists them (site search lists its own with it too).
async function nearestEntries(url, unmatched) {
  var nearest = await loadNearest(url);
  var found = nearest ? nearestIds(nearest, unmatched, false) : [];
  if (!found.length) return [];
  if (typeof self.failpediaNearestListed === "undefined") {
    importScripts(new URL("listed-entries.js", self.location.href).href);
  }
  var byId = {};
  index.entries.forEach(function (entry) { byId[entry.data.id] = entry.data; });
  return self.failpediaNearestListed(found, function (id) { return byId[id]; },
                                     nearest.rules.max_nearest);
}

function compareTimes(a, b) {
  var x = a === null ? Infinity : a, y = b === null ? Infinity : b;
  return x < y ? -1 : x > y ? 1 : 0;
}

function locationJson(item) {
  return { file: item.file, line: item.line, rank: item.rank, time: isoTime(item.time),
           time_text: item.time ? item.time.written : null };
}

function findingJson(f) {
  var first = locationJson(f.first);
  first.text = f.first.text; first.match = f.first.match;
  first.before = f.first.before; first.after = f.first.after;
  return {
    id: f.entry.id, title: f.entry.title, url: f.entry.url, category: f.entry.category,
    kind: f.entry.kind, role: f.entry.role, summary: f.entry.summary || "", count: f.count,
    ranks: sortRanks(f.ranks), root_cause: f.rootCause, first: first,
    locations: f.locations.map(locationJson),
  };
}

// The rank a file's name gives ("rank3.log"), as the CLI reads it; null where none.
function rankFromName(name) {
  var match = rules.rankInName ? rules.rankInName.exec(name) : null;
  return match ? String(parseInt(match[1], 10)) : null;
}

async function readFile(reader, file) {
  var stream = file.stream();
  var head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  if (head[0] === 0x1f && head[1] === 0x8b) {
    stream = stream.pipeThrough(new DecompressionStream("gzip"));
  }
  var decoder = new TextDecoder("utf-8");
  var source = stream.getReader();
  var total = 0, lastReport = 0;
  for (;;) {
    var part = await source.read();
    if (part.done) break;
    total += part.value.length;
    reader.bytes += part.value.length;
    reader.push(decoder.decode(part.value, { stream: true }), false);
    if (total - lastReport > CHUNK_BYTES) {
      lastReport = total;
      postMessage({ type: "progress", bytes: total, size: file.size });
    }
  }
  reader.push(decoder.decode(), false);
}

onmessage = async function (event) {
  var request = event.data;
  try {
    // Site search's second worker reads only nearest.json, on a thread of its own, while
    // the first reads and compiles signatures.json: `warm` reads it ahead of the first
    // text, `nearestTo` ranks the entries for lines the caller already has (a query no
    // signature matches, and no entry's message is close to), by id: the caller has the
    // entries' titles from signatures.json.
    if (request.nearestUrl) {
      if (request.warm) {
        await loadNearest(request.nearestUrl);
        postMessage({ type: "warm" });
        return;
      }
      var loaded = await loadNearest(request.nearestUrl);
      postMessage({ type: "nearest", number: request.number,
                    nearest: loaded ? nearestIds(loaded, request.nearestTo, !!request.anyScore) : [],
                    most: loaded ? loaded.rules.max_nearest : 0 });
      return;
    }
    if (!index) {
      // Once, however many requests arrive while it is read.
      loading = loading || fetch(request.indexUrl).then(function (response) {
        return response.json();
      }).then(compileIndex);
      await loading;
    }
    // Only signatures.json read and compiled, ahead of the first text (site search asks as
    // its box is focused). A text sent meanwhile is matched as soon as it is in.
    if (request.warm) {
      postMessage({ type: "warm" });
      return;
    }
    // Lines around each shown line: as many as asked, else the CLI's default (the rules').
    var state = newState(request.context === undefined ? rules.contextLines : request.context);
    var inputs = request.files && request.files.length ? request.files : null;
    if (inputs) {
      for (var i = 0; i < inputs.length; i++) {
        var reader = new Reader(state, i, inputs[i].name, rankFromName(inputs[i].name));
        await readFile(reader, inputs[i]);
        reader.finish();
        state.inputs.push({ name: inputs[i].name, rank: reader.rank, bytes: reader.bytes,
                            lines: reader.lineNo });
      }
    } else {
      var pasted = new Reader(state, 0, request.name || "pasted log", null);
      var text = request.text;
      for (var start = 0; start < text.length; start += CHUNK_BYTES) {
        pasted.push(text.slice(start, start + CHUNK_BYTES), false);
      }
      pasted.finish();
      state.inputs.push({ name: pasted.name, rank: null, bytes: text.length, lines: pasted.lineNo });
    }
    var result = finish(state);
    if (request.nearest && !result.findings.length && result.unmatched.length) {
      result.nearest = await nearestEntries(new URL("nearest.json", request.indexUrl), result.unmatched);
    }
    postMessage({ type: "done", result: result, siteUrl: index.siteUrl, issues: issueParts(result),
                  roleText: order.role_text, starterText: order.starter_text });
  } catch (error) {
    postMessage({ type: "error", message: String(error && error.message || error) });
  }
};
