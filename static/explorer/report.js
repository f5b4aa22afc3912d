/* The printed report: its Print button (a module, not an inline handler, so the page's CSP allows no inline script). */
for (const button of document.querySelectorAll("[data-print]")) {
  button.addEventListener("click", () => window.print());
}
