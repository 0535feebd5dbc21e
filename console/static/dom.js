// dom.js: small helpers that build DOM nodes. Data is only ever put in text nodes and
// attributes, never parsed as HTML.

// h builds an element: h('a', {href: '#/x', class: 'y'}, 'text', otherNode).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// when formats a GameLift timestamp (epoch seconds) in the browser's locale.
export function when(t) {
  if (t === undefined || t === null) return '';
  const d = new Date(typeof t === 'number' ? t * 1000 : t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}

// badge shows a status.
export function badge(s) {
  return s ? h('span', {class: 'status status-' + s}, s) : '';
}

// link is an anchor to a route of the console.
export function link(route, text) {
  return h('a', {href: '#' + route}, text);
}

// enc encodes an ID for a route segment (game session IDs are ARNs with slashes).
export const enc = encodeURIComponent;

// table renders items with columns [[header, item => cell], ...]; rows carry data-id.
export function table(columns, items, idOf) {
  if (!items || items.length === 0) return h('p', {class: 'muted'}, 'None.');
  return h('table', {},
    h('thead', {}, h('tr', {}, columns.map(([name]) => h('th', {}, name)))),
    h('tbody', {}, items.map(it => h('tr', {'data-id': idOf ? idOf(it) : null},
      columns.map(([, cell]) => h('td', {}, cell(it)))))));
}

// fields renders a definition list [[label, value, name?], ...]; dd carries data-field.
export function fields(rows) {
  return h('dl', {}, rows.filter(r => r[1] !== undefined && r[1] !== null && r[1] !== '')
    .map(([label, value, name]) => [h('dt', {}, label), h('dd', {'data-field': name || label}, value)]));
}

// card wraps content under a heading.
export function card(title, ...content) {
  return h('section', {class: 'card'}, title ? h('h2', {}, title) : null, ...content);
}
