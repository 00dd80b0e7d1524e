// Turns the single-page build of the book into the pages of its PDF, in the browser that prints
// it (tools/pdf.py). Defines window.markevalPrint with three steps:
//
//   prepare(book)  adds the title page, the table of contents and a title page per part, opens
//                  the exercise solutions, starts every document on a new page, and returns the
//                  outline: [{id, title, level}] (0 part or the introduction, 1 a chapter or
//                  page, 2 its sections), in reading order;
//   fit()          in the print layout, shrinks each code block, table and display equation that
//                  is wider than its box until it fits, and wraps what still does not fit under
//                  its own indentation; returns how many of each it changed;
//   fillPages(numbers)  writes the page number of each contents entry, {id: "12"}.
//
// `book` is {title, subtitle, meta: [lines], root: stem, parts: [{caption, docs: [stem]}]}.
(() => {
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  // A heading's text as a reader sees it: equations by their MathML text, no "#" link.
  const headingText = (heading) => {
    const copy = heading.cloneNode(true);
    copy.querySelectorAll('a.headerlink').forEach((a) => a.remove());
    copy.querySelectorAll('mjx-container').forEach((m) => {
      const mml = m.querySelector('mjx-assistive-mml');
      m.replaceWith(document.createTextNode(mml ? mml.textContent : ''));
    });
    return copy.textContent.replace(/\s+/g, ' ').trim();
  };

  const firstHeading = (section) =>
    Array.from(section.children).find((c) => /^H[1-6]$/.test(c.tagName));

  // The section that holds a document of the single page: the one after its anchor span.
  const documentSection = (stem) => {
    const anchor = document.getElementById('document-' + stem);
    let node = anchor ? anchor.nextElementSibling : null;
    while (node && node.tagName !== 'SECTION') node = node.nextElementSibling;
    return node;
  };

  const prepare = (book) => {
    document.documentElement.dataset.theme = 'light';
    document.documentElement.dataset.mode = 'light';
    document.querySelectorAll('details').forEach((d) => { d.open = true; });
    document.querySelectorAll('.toggle-hidden').forEach((e) => e.classList.remove('toggle-hidden'));

    const article = document.querySelector('article.bd-article') || document.querySelector('main');
    const outline = [];
    // Each entry's heading gets an id of its own: the single page repeats section ids across
    // documents ("summary", "exercises"), so a link to one would land on the first. The id goes
    // on the heading itself: Chromium placed the destination of an empty anchor inside a heading
    // that starts a page at the foot of the page before.
    const entry = (section, level) => {
      const heading = firstHeading(section);
      if (!heading) return null;
      if (heading.id) throw new Error('a heading of the single page has an id: ' + heading.id);
      heading.id = 'print-entry-' + outline.length;
      const item = {id: heading.id, title: headingText(heading), level};
      outline.push(item);
      return item;
    };
    const addDocument = (stem, level) => {
      const section = documentSection(stem);
      if (!section) throw new Error('the single page has no document ' + stem);
      if (stem !== book.root) section.classList.add('print-document');
      const heading = firstHeading(section);
      if (heading) heading.classList.add('print-document-title');
      entry(section, level);
      Array.from(section.children).filter((c) => c.tagName === 'SECTION')
        .forEach((s) => entry(s, level + 1));
    };

    const root = documentSection(book.root) || article.querySelector('section');
    entry(root, 0);
    // The landing page's "Contents" section holds its toctree, which the single page replaces
    // by the whole book: its heading gives way to the contents of the PDF.
    Array.from(root.children).filter((c) => c.tagName === 'SECTION').forEach((s) => {
      if (Array.from(s.children).some((c) => c.classList.contains('toctree-wrapper'))) {
        const heading = firstHeading(s);
        if (heading) heading.classList.add('print-hidden');
      } else {
        entry(s, 1);
      }
    });
    book.parts.forEach((part, i) => {
      const first = document.getElementById('document-' + part.docs[0]);
      if (!first) throw new Error('the single page has no document ' + part.docs[0]);
      const page = el('section', 'print-part');
      page.id = 'print-part-' + (i + 1);
      page.appendChild(el('h1', 'print-part-title', part.caption));
      first.parentNode.insertBefore(page, first);
      outline.push({id: page.id, title: part.caption, level: 0});
      part.docs.forEach((stem) => addDocument(stem, 1));
    });

    const front = el('div', 'print-front');
    const title = el('section', 'print-title-page');
    title.appendChild(el('div', 'print-title', book.title));
    title.appendChild(el('div', 'print-subtitle', book.subtitle));
    const meta = el('div', 'print-meta');
    book.meta.forEach((line) => meta.appendChild(el('div', '', line)));
    title.appendChild(meta);
    front.appendChild(title);
    const contents = el('section', 'print-contents');
    contents.appendChild(el('h1', '', 'Contents'));
    const kinds = ['print-toc-part', 'print-toc-doc', 'print-toc-section'];
    outline.forEach((item) => {
      const row = el('div', 'print-toc-entry ' + kinds[item.level]);
      const link = el('a', 'print-toc-title', item.title);
      link.href = '#' + item.id;
      row.appendChild(link);
      row.appendChild(el('span', 'print-toc-leader'));
      const number = el('span', 'print-toc-page');
      number.dataset.target = item.id;
      row.appendChild(number);
      contents.appendChild(row);
    });
    front.appendChild(contents);
    article.insertBefore(front, article.firstChild);
    return outline;
  };

  // The lines of a code block, each in a .print-line whose --indent is its indentation + 4, so
  // that a wrapped line continues under its own code (markeval.css). Pygments' markup is flat:
  // text nodes and one level of spans.
  const wrapLines = (pre) => {
    const lines = [[]];
    Array.from(pre.childNodes).forEach((node) => {
      const parts = node.textContent.split('\n');
      parts.forEach((text, i) => {
        if (i > 0) lines.push([]);
        if (!text) return;
        const piece = node.nodeType === Node.ELEMENT_NODE ? node.cloneNode(false)
                                                          : document.createTextNode('');
        piece.textContent = text;
        lines[lines.length - 1].push(piece);
      });
    });
    pre.textContent = '';
    lines.forEach((pieces) => {
      const line = el('span', 'print-line');
      pieces.forEach((p) => line.appendChild(p));
      const indent = line.textContent.match(/^ */)[0].length;
      line.style.setProperty('--indent', String(indent + 4));
      if (!pieces.length) line.textContent = '\u200b';
      pre.appendChild(line);
    });
  };

  const MIN_CODE_PX = 7;      // 5.25 pt: the smallest code the PDF prints before wrapping
  const MIN_SCALE = 0.6;      // tables and equations shrink at most to 60 %

  const fit = () => {
    const changed = {code: 0, wrapped: 0, tables: 0, equations: 0};
    const shown = (e) => e.getClientRects().length > 0;
    document.querySelectorAll('div.highlight pre, div.cell_output pre').forEach((pre) => {
      if (!shown(pre) || pre.scrollWidth <= pre.clientWidth + 1) return;
      const size = parseFloat(getComputedStyle(pre).fontSize);
      const wanted = size * (pre.clientWidth - 16) / (pre.scrollWidth - 16) * 0.98;
      pre.style.fontSize = Math.max(wanted, MIN_CODE_PX) + 'px';
      changed.code += 1;
      if (pre.scrollWidth > pre.clientWidth + 1) {
        wrapLines(pre);
        changed.wrapped += 1;
      }
    });
    const shrink = (e, width, room) => {
      const scale = Math.max(room / width * 0.98, MIN_SCALE);
      e.style.fontSize = (parseFloat(getComputedStyle(e).fontSize) * scale) + 'px';
    };
    document.querySelectorAll('table').forEach((table) => {
      const box = table.parentElement;
      if (!shown(table) || table.closest('mjx-container')) return;
      const width = table.getBoundingClientRect().width;
      const room = box.clientWidth;
      if (width <= room + 1) return;
      shrink(table, width, room);
      changed.tables += 1;
    });
    document.querySelectorAll('div.math mjx-container').forEach((m) => {
      const math = m.querySelector('mjx-math');
      if (!math || !shown(m)) return;
      const width = math.getBoundingClientRect().width;
      const room = m.parentElement.clientWidth;
      if (width <= room + 1) return;
      shrink(m, width, room);
      changed.equations += 1;
    });
    return changed;
  };

  const fillPages = (numbers) => {
    document.querySelectorAll('.print-toc-page').forEach((span) => {
      span.textContent = numbers[span.dataset.target] || '';
    });
  };

  window.markevalPrint = {prepare, fit, fillPages};
})();
