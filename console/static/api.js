// api.js: the console's calls to the server: the session, read operations, and the event
// stream of a page's queries.

const headers = {'Content-Type': 'application/json', 'X-Hoist-Console': '1'};

async function send(method, path, body) {
  const res = await fetch('/console' + path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin'});
  const text = await res.text();
  const data = text ? JSON.parse(text) : {};
  if (!res.ok) {
    const err = new Error(data.message || data.Message || res.statusText);
    err.status = res.status;
    err.code = data.__type;
    throw err;
  }
  return data;
}

// session returns who is logged in, or throws (status 401) when nobody is.
export const session = () => send('GET', '/session');
// login exchanges the key pair for a session cookie.
export const login = (id, secret) => send('POST', '/session', {AccessKeyId: id, SecretAccessKey: secret});
// logout removes the session cookie.
export const logout = () => send('DELETE', '/session');
// call runs one read-only GameLift operation.
export const call = (op, input) => send('POST', '/api/' + op, input || {});

// subscribe opens the event stream of queries ({key: {Op, Input}}). onAnswer(key, answer)
// gets each answer ({Status, Body}) that changed, onSynced() follows each batch, and
// onState(state) reports 'live', 'reconnecting' or 'closed'. It returns the close function.
export function subscribe(queries, {onAnswer, onSynced, onState, onExpired}) {
  const es = new EventSource('/console/events?q=' + encodeURIComponent(JSON.stringify(queries)));
  es.addEventListener('open', () => onState('live'));
  es.addEventListener('answer', e => {
    const a = JSON.parse(e.data);
    onAnswer(a.Key, a);
  });
  es.addEventListener('synced', () => onSynced());
  es.addEventListener('expired', () => { es.close(); onExpired(); });
  es.addEventListener('error', () => onState(es.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting'));
  return () => es.close();
}
