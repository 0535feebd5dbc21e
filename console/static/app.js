// app.js: the console's shell: login, navigation, hash routing, and the live page engine.
// A page (a view, see views.js) declares the read operations it shows; the engine
// subscribes to them over server-sent events and renders whenever an answer changes.

import {h} from './dom.js';
import * as api from './api.js';
import {views, nav} from './views.js';

const main = document.getElementById('main');
const live = document.getElementById('live');
let page = null; // the page shown: {view, p, data, queries, close, body}

// parseHash splits location.hash into path segments and query parameters.
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query] = raw.split('?');
  return {segments: path ? path.split('/').map(decodeURIComponent) : [], query: new URLSearchParams(query || '')};
}

// match finds the view whose pattern ('fleets/:id') fits the segments.
function match(segments) {
  for (const view of views) {
    const pat = view.path.split('/');
    if (pat.length !== segments.length) continue;
    const params = {};
    if (pat.every((s, i) => s.startsWith(':') ? (params[s.slice(1)] = segments[i], true) : s === segments[i])) {
      return {view, params};
    }
  }
  return null;
}

function setLive(state) {
  live.textContent = state;
  live.className = 'live' + (state === 'live' ? ' on' : '');
}

// show routes to the view of the current hash.
async function show() {
  if (page) page.close();
  page = null;
  const {segments, query} = parseHash();
  if (segments[0] === 'login') return showLogin();
  if (!(await loggedIn())) return;
  const m = match(segments) || match(['fleets']);
  const p = {...m.params, query};
  const body = h('div', {id: 'page-body'});
  page = {view: m.view, p, data: {}, queries: '', close: () => {}, body};
  markNav(m.view.path.split('/')[0]);
  main.replaceChildren(h('h1', {}, m.view.title(p)), m.view.controls ? m.view.controls(p) : '', body);
  document.title = m.view.title(p) + ' · Hoist';
  resubscribe(page);
}

// resubscribe opens the page's stream when its queries differ from those it streams (a page
// may add queries once it knows more, e.g. one per fleet location).
function resubscribe(pg) {
  const qs = pg.view.queries(pg.p, pg.data);
  const key = JSON.stringify(qs);
  if (key === pg.queries) return;
  pg.close();
  pg.queries = key;
  if (Object.keys(qs).length === 0) {
    pg.close = () => {};
    render(pg);
    return;
  }
  pg.close = api.subscribe(qs, {
    onAnswer: (k, a) => { pg.data[k] = a; },
    onSynced: () => {
      if (page !== pg) return;
      render(pg);
      resubscribe(pg);
    },
    onState: s => {
      setLive(s);
      if (s === 'closed' && page === pg) loggedIn();
    },
    onExpired: () => showLogin(),
  });
}

// render shows the page's data. While the operator types in one of the page's fields, it
// waits until the field loses focus (and a click on a button next to it has happened).
function render(pg) {
  const active = document.activeElement;
  if (active && pg.body.contains(active) && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName)) {
    if (!pg.deferred) {
      pg.deferred = true;
      active.addEventListener('blur', () => setTimeout(() => { pg.deferred = false; if (page === pg) render(pg); }, 300), {once: true});
    }
    return;
  }
  try {
    pg.body.replaceChildren(pg.view.render(pg.p, pg.data));
  } catch (e) {
    pg.body.replaceChildren(h('p', {class: 'error'}, 'This page failed to render: ' + e.message));
  }
}

function markNav(first) {
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', a.getAttribute('href') === '#/' + first);
  }
}

// loggedIn checks the session, showing the login form when there is none.
async function loggedIn() {
  try {
    const s = await api.session();
    document.getElementById('who').textContent = s.Open ? 'no login (signatures off)' : s.AccessKeyId;
    document.getElementById('logout').hidden = s.Open;
    document.getElementById('nav').hidden = false;
    return true;
  } catch (e) {
    if (e.status === 401) showLogin();
    else main.replaceChildren(h('p', {class: 'error'}, 'The server did not answer: ' + e.message));
    return false;
  }
}

function showLogin() {
  if (page) page.close();
  page = null;
  setLive('offline');
  document.getElementById('who').textContent = '';
  document.getElementById('logout').hidden = true;
  document.getElementById('nav').hidden = true;
  const msg = h('p', {class: 'error', id: 'login-error'});
  const form = h('form', {id: 'login', onsubmit: submitLogin},
    h('label', {}, 'Access key ID', h('input', {id: 'access-key-id', name: 'id', autocomplete: 'username', required: true})),
    h('label', {}, 'Secret access key', h('input', {id: 'secret-access-key', name: 'secret', type: 'password',
      autocomplete: 'current-password', required: true})),
    h('button', {class: 'primary', type: 'submit'}, 'Log in'), msg);
  main.replaceChildren(h('div', {class: 'login card'}, h('h1', {}, 'Log in to Hoist'),
    h('p', {class: 'muted'}, 'Use the access key pair the API takes (the server prints it on first start; it is kept in credentials.json in the data directory).'),
    form));
}

async function submitLogin(ev) {
  ev.preventDefault();
  const f = ev.target;
  try {
    await api.login(f.id.value.trim(), f.secret.value);
    if (parseHash().segments[0] === 'login' || !location.hash) location.hash = '#/fleets';
    else show();
  } catch (e) {
    document.getElementById('login-error').textContent = e.message;
  }
}

function init() {
  document.getElementById('nav').replaceChildren(...nav.map(([route, label]) => h('a', {href: '#/' + route}, label)));
  document.getElementById('logout').addEventListener('click', async () => {
    await api.logout();
    location.hash = '#/login';
  });
  window.addEventListener('hashchange', show);
  show();
}

init();
