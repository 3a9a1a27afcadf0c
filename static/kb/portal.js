// Knowledge Belt's page behaviour, in one static file so that the Content-Security-Policy can
// forbid inline scripts and handlers (script-src 'self'). Markup asks for behaviour with data
// attributes: data-autosubmit on a select, data-reset-on-success on an htmx form,
// data-highlight on the document page's body of text.
(function () {
  "use strict";

  // Enter sends the question, Shift+Enter makes a new line (IME composition left alone).
  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (box.id === "question" && event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      if (box.value.trim()) { box.form.requestSubmit(); }
    }
  });

  // A filter select submits its form when it changes.
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (select.matches && select.matches("select[data-autosubmit]") && select.form) {
      select.form.submit();
    }
  });

  // An htmx form marked data-reset-on-success is emptied once its request succeeded.
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail && event.detail.elt;
    if (event.detail.successful && form && form.matches && form.matches("form[data-reset-on-success]")) {
      form.reset();
    }
  });

  // A new turn of the conversation: keep it in view.
  document.addEventListener("htmx:afterSwap", function () {
    if (document.getElementById("turns")) { window.scrollTo(0, document.body.scrollHeight); }
  });

  // Opened from an answer: bring the cited chunk into view.
  function highlight() {
    var holder = document.querySelector("[data-highlight]");
    if (!holder) { return; }
    var el = document.querySelector(".highlight") ||
      document.getElementById("chunk-" + holder.getAttribute("data-highlight"));
    if (el) { el.scrollIntoView({block: "center"}); }
  }

  // A deep link (#sec-3-2, #row-7) into a folded part opens it first, then scrolls to it.
  function reveal() {
    if (!location.hash) { return; }
    var el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (!el) { return; }
    for (var p = el; p; p = p.parentElement) { if (p.tagName === "DETAILS") { p.open = true; } }
    el.scrollIntoView({block: "start"});
  }

  function ready() {
    highlight();
    reveal();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
  window.addEventListener("hashchange", reveal);
  document.addEventListener("htmx:afterSettle", function () { if (location.hash) { reveal(); } });
})();
