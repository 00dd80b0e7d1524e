// Adds "PDF (whole book)" to the download button of every page. The PDF is written next to
// the HTML by `python -m tools.pdf` (part of `make book`).
document.addEventListener("DOMContentLoaded", () => {
  const menu = document.querySelector(".dropdown-download-buttons ul");
  const root = document.documentElement.dataset.content_root
    || (window.DOCUMENTATION_OPTIONS && DOCUMENTATION_OPTIONS.URL_ROOT) || "";
  if (!menu) return;
  const item = document.createElement("li");
  item.innerHTML = '<a href="' + root + 'markeval.pdf" class="btn btn-sm dropdown-item" '
    + 'title="The whole book as one PDF" data-bs-placement="left" data-bs-toggle="tooltip" download>'
    + '<span class="btn__icon-container"><i class="fas fa-file-pdf"></i></span>'
    + '<span class="btn__text-container">PDF (whole book)</span></a>';
  menu.appendChild(item);
});
