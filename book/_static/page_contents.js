// The list button of the article header opens the page's contents where the right-hand sidebar
// is hidden (below 1400 px, book/_static/markeval.css). The theme (pydata-sphinx-theme 0.17)
// opens that panel from the first `.secondary-toggle` of the page only, which is the button of
// its own top bar, hidden under sphinx-book-theme; the visible button did nothing. It now
// presses that one.
document.addEventListener("DOMContentLoaded", () => {
  const opener = document.querySelector(".bd-header .secondary-toggle");
  if (!opener) return;
  document.querySelectorAll(".bd-header-article .secondary-toggle").forEach((button) => {
    button.addEventListener("click", (event) => {
      event.preventDefault();
      event.stopPropagation();
      opener.click();
    });
  });
});
