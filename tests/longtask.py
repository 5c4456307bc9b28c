"""Measure how long a page's main thread is kept busy: the longest task it ran while the
test drove it, from the Long Tasks API (tasks over 50 ms)."""

from __future__ import annotations

# Run before the page's own scripts (``page.add_init_script``).
RECORD_LONGEST_TASK = """
window.failpediaLongestTask = 0;
new PerformanceObserver(function (list) {
  list.getEntries().forEach(function (entry) {
    window.failpediaLongestTask = Math.max(window.failpediaLongestTask, entry.duration);
  });
}).observe({ type: "longtask", buffered: true });
"""
# Generous: a frozen page took tens of seconds here; a responsive one takes at most a
# few hundred milliseconds.
LONGEST_TASK_BOUND_MS = 2000


def longest_task_ms(page) -> float:
    return float(page.evaluate("window.failpediaLongestTask"))
