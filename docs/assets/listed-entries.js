// The entries listed where no signature matched a text: of the ids ranked nearest to it in
// wording (best first, each with its score), the first `most` that the catalog
// (signatures.json) still holds, each with what a reader sees of it. The log page's worker
// (importScripts) and site search (a page script) both list them with this one function,
// so an entry reads the same in both and as `failpedia diagnose --format json` writes it.
(function (scope) {
  scope.failpediaNearestListed = function (ranked, lookup, most) {
    return ranked.filter(function (item) { return lookup(item.id); }).slice(0, most)
      .map(function (item) {
        var entry = lookup(item.id);
        return { id: entry.id, title: entry.title, url: entry.url, summary: entry.summary || "",
                 score: item.score };
      });
  };
})(typeof window !== "undefined" ? window : self);
