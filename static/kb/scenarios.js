// The mind map's "Expand all" / "Collapse all" buttons (data-mindmap="open" | "close"). The
// tree itself is nested <details> lists: it folds and unfolds without this script.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-mindmap]");
    if (!button) { return; }
    var open = button.getAttribute("data-mindmap") === "open";
    document.querySelectorAll(".mm-tree details").forEach(function (details) {
      details.open = open;
    });
  });
})();
