// Live pages (htmx). Works with the site's Content-Security-Policy: no inline script, no eval.
// - A hidden tab does not poll (elements marked data-live); when it is shown again it refreshes at once.
// - The post form is emptied after a successful post (the live poll then shows the new message); a refused
//   post (header X-Post-Refused) keeps the text and shows the reason; the focus goes to the new message.
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
  // After a post the keyboard and the screen reader go to the new message (the live poll brings it): the newest
  // message that was not on the page when the post was sent gets tabindex=-1 and the focus.
  var newestBeforePost = null;
  function newestMessage() {
    var messages = document.querySelectorAll("section.thread article.message");
    return messages.length ? messages[messages.length - 1] : null;
  }
  document.addEventListener("htmx:afterRequest", function (event) {
    var elt = event.detail && event.detail.elt;
    if (elt && elt.id === "post-form" && event.detail.successful
        && !event.detail.xhr.getResponseHeader("X-Post-Refused")) {
      elt.reset();
      var newest = newestMessage();
      newestBeforePost = newest ? newest.id : "";
    }
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (newestBeforePost === null) {
      return;
    }
    var newest = newestMessage();
    if (newest && newest.id !== newestBeforePost) {
      newestBeforePost = null;
      newest.setAttribute("tabindex", "-1");
      newest.focus();
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
