// common.js: what every page shares: reading answers, filters, paging, and list pages.

import {h, table} from './dom.js';

// PAGE_SIZE is how many items a list page asks for.
export const PAGE_SIZE = 25;

// body returns the answer of key when it succeeded.
export function body(data, key) {
  const a = data[key];
  return a && a.Status === 200 ? a.Body : undefined;
}

// problem renders the error of key's answer, a 'loading' line, or nothing when it succeeded.
export function problem(data, key) {
  const a = data[key];
  if (!a) return h('p', {class: 'muted'}, 'Loading…');
  if (a.Status === 200) return null;
  const b = a.Body || {};
  return h('p', {class: 'error'}, (b.__type || 'Error ' + a.Status).split('#').pop() + ': ' + (b.message || b.Message || ''));
}

// section renders key's answer with fn, or its problem.
export function section(data, key, fn) {
  const b = body(data, key);
  return b === undefined ? problem(data, key) : fn(b);
}

// go navigates to route with the query parameters that are set.
export function go(route, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v) q.set(k, v);
  const s = q.toString();
  location.hash = '#/' + route + (s ? '?' + s : '');
}

// filterForm renders filters [{name, label, options?}] for route; submitting them navigates
// to the first page with the chosen values.
export function filterForm(route, p, filters) {
  const inputs = filters.map(f => f.options
    ? h('select', {name: f.name}, f.options.map(o => h('option', {value: o, selected: p.query.get(f.name) === o}, o || 'any')))
    : h('input', {name: f.name, value: p.query.get(f.name) || '', placeholder: f.placeholder || ''}));
  const submit = ev => {
    ev.preventDefault();
    go(route, Object.fromEntries(filters.map((f, i) => [f.name, inputs[i].value.trim()])));
  };
  return h('form', {class: 'filters', onsubmit: submit},
    filters.map((f, i) => h('label', {}, f.label, inputs[i])), h('button', {type: 'submit'}, 'Apply'));
}

// pager renders 'First page' and 'Next page' for a NextToken-paged list.
export function pager(route, p, next) {
  const params = Object.fromEntries(p.query.entries());
  return h('div', {class: 'pager'},
    p.query.get('token') ? h('button', {type: 'button', onclick: () => go(route, {...params, token: ''})}, 'First page') : null,
    p.query.get('token') ? h('button', {type: 'button', onclick: () => history.back()}, 'Previous page') : null,
    next ? h('button', {type: 'button', id: 'next-page', onclick: () => go(route, {...params, token: next})}, 'Next page') : null);
}

// matches is the client-side text filter: item's JSON contains text, ignoring case.
export function matches(item, text) {
  return !text || JSON.stringify(item).toLowerCase().includes(text.toLowerCase());
}

// listView makes a paged list page: op is called with input(p) plus Limit and NextToken;
// items(body) picks the list; server filters go into input, 'q' filters the page's items.
export function listView({path, title, op, input, items, id, columns, filters, empty}) {
  const all = [...(filters || []), {name: 'q', label: 'Text on this page', placeholder: 'name, ID, …'}];
  return {
    path,
    title: () => title,
    controls: p => filterForm(path, p, all),
    queries: p => ({list: {Op: op, Input: {...(input ? input(p) : {}), Limit: PAGE_SIZE,
      NextToken: p.query.get('token') || undefined}}}),
    render: (p, data) => section(data, 'list', b => h('div', {class: 'card'},
      table(columns, items(b).filter(it => matches(it, p.query.get('q'))), id),
      empty && items(b).length === 0 ? h('p', {class: 'muted'}, empty) : null,
      pager(path, p, b.NextToken))),
  };
}

// lookupView makes the page of a resource kind with no list operation (placements, tickets):
// a form that opens the detail page of an ID.
export function lookupView({path, title, label, detail, note}) {
  return {
    path,
    title: () => title,
    controls: () => {
      const input = h('input', {name: 'id', placeholder: label});
      return h('form', {class: 'filters', onsubmit: ev => { ev.preventDefault(); go(detail + '/' + encodeURIComponent(input.value.trim())); }},
        h('label', {}, label, input), h('button', {type: 'submit'}, 'Open'));
    },
    queries: () => ({}),
    render: () => h('p', {class: 'muted'}, note),
  };
}
