/* Start: the page's snapshot first, so the tree shows before the socket opens; then the socket. */
(function (E) {
  "use strict";

  const initial = JSON.parse(document.getElementById("tree-data").textContent);
  E.applySnapshot(initial, initial.session && initial.session.seq);
  E.connect();
})(window.Explorer);
