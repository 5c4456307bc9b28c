// The home page's search box hands what is typed or pasted to the site search in the
// header (the theme's search, with search-paste.js cleaning the query), so the same
// search runs from a box that is visible at every screen size.
(function () {
  "use strict";

  function wire() {
    var box = document.querySelector(".fp-search-input");
    var query = document.querySelector('[data-md-component="search-query"]');
    var toggle = document.querySelector('input[data-md-toggle="search"]');
    if (!box || !query || !toggle || box.dataset.wired) return;
    box.dataset.wired = "1";
    function handOver() {
      if (!box.value) return;
      if (!toggle.checked) {
        toggle.checked = true;
        toggle.dispatchEvent(new Event("change"));
      }
      query.value = box.value;
      box.value = "";
      query.focus();
      query.dispatchEvent(new Event("input", { bubbles: true }));
    }
    box.addEventListener("input", handOver);
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(wire);  // pages swapped in by instant navigation
  } else {
    document.addEventListener("DOMContentLoaded", wire);
  }
})();
