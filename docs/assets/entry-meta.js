// The copy-link button beside an entry's id under its title. Added here, not in the page,
// so a reader without scripts sees no button that does nothing. It copies the page's
// canonical address (the theme writes <link rel="canonical">), without any #fragment.
(function () {
  "use strict";

  function pageAddress() {
    var canonical = document.querySelector('link[rel="canonical"]');
    if (canonical && canonical.href) return canonical.href;
    return location.href.split("#")[0];
  }

  function wire() {
    document.querySelectorAll(".fp-entry-id").forEach(function (holder) {
      if (holder.querySelector(".fp-copy-link")) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "fp-copy-link";
      button.textContent = "Copy link";  // its name too: what it says is what it does
      button.addEventListener("click", function () {
        var done = function () {
          button.textContent = "Link copied";
          setTimeout(function () { button.textContent = "Copy link"; }, 2000);
        };
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(pageAddress()).then(done, function () {
            button.textContent = "Copy failed";
          });
        } else {
          button.textContent = "Copy failed";
        }
      });
      holder.appendChild(button);
    });
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(wire);  // pages swapped in by instant navigation
  } else {
    document.addEventListener("DOMContentLoaded", wire);
  }
})();
