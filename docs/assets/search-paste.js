// Make the site search work on pasted error messages.
//
// Material's search runs lunr, whose query syntax gives meaning to characters that error
// messages are full of: a word ending in ":" ("RuntimeError:") is read as a field name and
// dropped, leading "+"/"-" mark presence, and "^ ~ *" are boost, fuzziness and wildcard.
// Queries are cleaned of that syntax before they reach the search worker. The search box
// listens for key events, so a paste with the mouse, a drop or an autocompletion would not
// search: every input event is passed on as a keyup (the search skips repeated values).
(function () {
  "use strict";

  // The query is split the way the index splits page text (the separator in mkdocs.yml:
  // punctuation, and dots except inside numbers) and one-character pieces are dropped:
  // with the lone "s" of "Error(s)", or the letters of "i.e." and "w.r.t.", in the query,
  // pasted messages ranked unrelated pages first and their own entry not at all.
  var SEPARATOR = /[\s\-,:;!=\[\]()"'`/<>|{}*#@?+~^&%$]+|(?<![0-9])\.|\.(?![0-9])/;
  function cleanQuery(text) {
    return String(text)
      .split(SEPARATOR)
      .filter(function (token) { return token && token.length > 1; })
      .join(" ");
  }
  window.failpediaCleanQuery = cleanQuery;

  // The search worker receives the query as a message of type 2 ({type, data}); clean it there
  // so the text in the box stays exactly what the reader pasted. Queries are also debounced:
  // the search runs on every keyup, and a long error message typed or pasted in pieces would
  // otherwise queue one full search per character.
  var postMessage = Worker.prototype.postMessage;
  var pending = null;
  Worker.prototype.postMessage = function (message) {
    if (!(message && message.type === 2 && typeof message.data === "string")) {
      return postMessage.apply(this, arguments);
    }
    var worker = this;
    var cleaned = Object.assign({}, message, { data: cleanQuery(message.data) });
    clearTimeout(pending);
    pending = setTimeout(function () { postMessage.call(worker, cleaned); }, 150);
  };

  document.addEventListener("input", function (event) {
    var input = event.target;
    if (!input || !input.matches || !input.matches("[data-md-component=search-query]")) return;
    input.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true }));
  });
})();
