// Live pages (htmx). Works with the site's Content-Security-Policy: no inline script, no eval.
// - A hidden tab does not poll (elements marked data-live); when it is shown again it refreshes at once.
// - The post form is emptied after a successful post (the live poll then shows the new message); a refused
//   post (header X-Post-Refused) keeps the text and shows the reason.
(function () {
  "use strict";
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail && event.detail.elt;
    if (document.hidden && elt && elt.hasAttribute && elt.hasAttribute("data-live")) {
      event.preventDefault();
    }
  });
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && window.htmx) {
      window.htmx.trigger(document.body, "thread-refresh");
      window.htmx.trigger(document.body, "badge-refresh");
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var elt = event.detail && event.detail.elt;
    if (elt && elt.id === "post-form" && event.detail.successful
        && !event.detail.xhr.getResponseHeader("X-Post-Refused")) {
      elt.reset();
    }
  });
  // A page whose reader lost access (404) or that went wrong stops polling instead of asking forever.
  document.addEventListener("htmx:responseError", function (event) {
    var elt = event.detail && event.detail.elt;
    if (elt && elt.hasAttribute && elt.hasAttribute("data-live")) {
      elt.remove();
    }
  });
})();
