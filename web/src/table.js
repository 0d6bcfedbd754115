// table.js - a sortable, filterable, paginated table for the pages.
// Rows stay in memory; only one page of them is in the DOM, so a table of
// 10,000 trials draws 50 rows.  Columns: {key, label, value(row) -> sort
// value, cell(row) -> Node|string, num: right-aligned numbers}.
import { h, clear } from './api.js';

export function makeTable({ columns, pageSize = 50, sortKey = null, sortDir = 1,
                            filterPlaceholder = 'filter', rowKey = (r) => r.id, tools = [] }) {
  let rows = [];
  let view = [];
  let page = 0;
  let filter = '';
  const byKey = new Map();
  const colOf = (k) => columns.find((c) => c.key === k);
  const value = (c, r) => (c.value ? c.value(r) : r[c.key]);

  const input = h('input', { type: 'search', placeholder: filterPlaceholder, size: 28,
                             'aria-label': 'filter rows' });
  const count = h('span', { class: 'muted' });
  const head = h('tr');
  const body = h('tbody');
  const pager = h('div', { class: 'pager' });
  const el = h('div', { class: 'table' },
    h('div', { class: 'table-tools' }, input, tools, count),
    h('div', { style: { overflowX: 'auto' } }, h('table', {}, h('thead', {}, head), body)),
    pager);

  for (const c of columns) {
    const th = h('th', { class: (c.num ? 'num ' : '') + (c.nosort ? '' : 'sortable'),
                         'data-key': c.key, title: c.title }, c.label);
    if (!c.nosort) th.addEventListener('click', () => {
      sortDir = sortKey === c.key ? -sortDir : (c.num ? -1 : 1);
      sortKey = c.key;
      page = 0;
      apply();
    });
    head.append(th);
  }
  let t = null;
  input.addEventListener('input', () => {
    clearTimeout(t);
    t = setTimeout(() => { filter = input.value.trim().toLowerCase(); page = 0; apply(); }, 120);
  });

  // "lr>0.01 relu" : words are substrings of any cell; key<op>number
  // compares a column.
  function matcher() {
    if (!filter) return null;
    const tests = filter.split(/\s+/).map((w) => {
      const m = w.match(/^([\w.]+)(<=|>=|=|<|>)(.+)$/);
      if (m) {
        const c = colOf(m[1]) || columns.find((x) => x.label.toLowerCase() === m[1]);
        if (c) {
          const num = Number(m[3]);
          return (r) => {
            const v = value(c, r);
            if (Number.isNaN(num)) return String(v ?? '').toLowerCase() === m[3];
            if (v === null || v === undefined) return false;
            switch (m[2]) {
              case '<': return v < num; case '>': return v > num;
              case '<=': return v <= num; case '>=': return v >= num; default: return v === num;
            }
          };
        }
      }
      return (r) => columns.some((c) => String(value(c, r) ?? '').toLowerCase().includes(w));
    });
    return (r) => tests.every((f) => f(r));
  }

  function apply() {
    const m = matcher();
    view = m ? rows.filter(m) : rows.slice();
    const c = sortKey && colOf(sortKey);
    if (c) {
      view.sort((a, b) => {
        const x = value(c, a), y = value(c, b);
        const nx = x === null || x === undefined || Number.isNaN(x);
        const ny = y === null || y === undefined || Number.isNaN(y);
        if (nx || ny) return nx === ny ? 0 : nx ? 1 : -1; // unknowns last either way
        return (x < y ? -1 : x > y ? 1 : 0) * sortDir;
      });
    }
    head.querySelectorAll('th').forEach((th) => {
      th.classList.toggle('sorted-asc', th.dataset.key === sortKey && sortDir > 0);
      th.classList.toggle('sorted-desc', th.dataset.key === sortKey && sortDir < 0);
    });
    draw();
  }

  function draw() {
    const pages = Math.max(1, Math.ceil(view.length / pageSize));
    page = Math.min(page, pages - 1);
    clear(body);
    const from = page * pageSize;
    for (const r of view.slice(from, from + pageSize)) {
      body.append(h('tr', { 'data-id': rowKey(r) }, columns.map((c) =>
        h('td', { class: c.num ? 'num' : undefined }, c.cell ? c.cell(r) : (value(c, r) ?? '–')))));
    }
    count.textContent = view.length === rows.length ? `${rows.length} rows`
                                                    : `${view.length} of ${rows.length} rows`;
    el.dataset.rows = String(rows.length);
    el.dataset.shown = String(view.length);
    clear(pager);
    if (pages > 1) {
      const go = (p) => () => { page = p; draw(); };
      pager.append(
        h('button', { onclick: go(0), disabled: page === 0 }, '«'),
        h('button', { onclick: go(page - 1), disabled: page === 0 }, '‹ prev'),
        `rows ${from + 1}–${Math.min(view.length, from + pageSize)} of ${view.length} · page ${page + 1} of ${pages}`,
        h('button', { onclick: go(page + 1), disabled: page >= pages - 1 }, 'next ›'),
        h('button', { onclick: go(pages - 1), disabled: page >= pages - 1 }, '»'));
    }
  }

  return {
    el,
    // Replace every row (keeps sort, filter and page).
    setRows(list) {
      rows = list.slice();
      byKey.clear();
      rows.forEach((r, i) => byKey.set(rowKey(r), i));
      apply();
    },
    // Insert or replace rows by key.
    upsert(list) {
      for (const r of list) {
        const k = rowKey(r);
        if (byKey.has(k)) rows[byKey.get(k)] = r;
        else { byKey.set(k, rows.length); rows.push(r); }
      }
      apply();
    },
    rows: () => rows,
  };
}
