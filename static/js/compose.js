// The post box's helpers: a "quote" link quotes the post it belongs to (its shown text, each line marked with
// "> ", the author named) and a link with data-fill puts its text (a vote) in the box; both without leaving the
// page. Without JavaScript the links load the page with the box filled (?quote=, ?say=). Nothing is sent: the
// author still presses Post.
(function () {
  "use strict";
  function box() { return document.querySelector("#post-form textarea[name=text]"); }
  function put(text) {
    var area = box();
    if (!area) { return false; }
    var current = area.value.replace(/\s+$/, "");
    area.value = current ? current + "\n\n" + text : text;
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
    area.scrollIntoView({block: "center"});
    return true;
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest("a.quote-link, a[data-fill]");
    if (!link) { return; }
    var text;
    if (link.hasAttribute("data-fill")) {
      text = link.getAttribute("data-fill") + "\n";
    } else {
      var article = document.getElementById(link.getAttribute("data-quote-of"));
      var body = article && article.querySelector(".body");
      if (!body) { return; }
      var author = article.querySelector("header strong");
      var lines = body.innerText.replace(/\s+$/, "").split("\n").map(function (line) {
        return line.trim() ? "> " + line : ">";
      });
      text = "> **" + (author ? author.innerText : "") + "** wrote:\n>\n" + lines.join("\n") + "\n\n";
    }
    if (put(text)) { event.preventDefault(); }
  });
})();
