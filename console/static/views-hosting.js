// views-hosting.js: fleets (with their locations, capacity, events, instances and computes),
// game sessions and player sessions.

import {h, badge, link, enc, when, table, fields, card} from './dom.js';
import {call} from './api.js';
import {body, section, listView, filterForm, pager, matches, PAGE_SIZE} from './common.js';

const fleetStatuses = ['', 'NEW', 'DOWNLOADING', 'VALIDATING', 'BUILDING', 'ACTIVATING', 'ACTIVE', 'DELETING', 'ERROR', 'TERMINATED'];
const sessionStatuses = ['', 'ACTIVE', 'ACTIVATING', 'TERMINATED', 'TERMINATING', 'ERROR'];

const fleetLink = id => link('/fleets/' + enc(id), id);
const sessionLink = (id, text) => link('/game-sessions/' + enc(id), text || id);

export const fleets = {
  ...listView({
    path: 'fleets', title: 'Fleets', op: 'DescribeFleetAttributes',
    items: b => b.FleetAttributes || [], id: f => f.FleetId,
    columns: [
      ['Fleet', f => h('span', {}, fleetLink(f.FleetId), h('br'), h('span', {class: 'muted'}, f.Name))],
      ['Status', f => badge(f.Status)],
      ['Compute', f => f.ComputeType || 'EC2'],
      ['Type', f => [f.FleetType, f.InstanceType].filter(Boolean).join(' · ')],
      ['Build', f => f.BuildId ? link('/builds/' + enc(f.BuildId), f.BuildId) : ''],
      ['Created', f => when(f.CreationTime)],
    ],
  }),
};
// The status filter applies to the page's items: DescribeFleetAttributes has no filter.
fleets.controls = p => filterForm('fleets', p, [{name: 'status', label: 'Status', options: fleetStatuses},
  {name: 'q', label: 'Text on this page', placeholder: 'name, ID, …'}]);
const baseFleetsRender = fleets.render;
fleets.render = (p, data) => {
  const st = p.query.get('status');
  const b = body(data, 'list');
  if (!st || !b) return baseFleetsRender(p, data);
  return baseFleetsRender(p, {list: {Status: 200, Body: {...b, FleetAttributes: (b.FleetAttributes || []).filter(f => f.Status === st)}}});
};

// locationTable shows each location's status, instance counts (EC2 fleets only, as in
// GameLift) and utilization (active server processes, game sessions, players).
function locationTable(data, ec2) {
  const locs = (body(data, 'locations') || {}).LocationAttributes || [];
  const cols = [['Location', x => x.name], ['Status', x => badge(x.l.LocationState.Status)]];
  if (ec2) {
    for (const [label, k] of [['Desired', 'DESIRED'], ['Min', 'MINIMUM'], ['Max', 'MAXIMUM'], ['Active instances', 'ACTIVE'], ['Idle', 'IDLE']]) {
      cols.push([label, x => x.n[k] ?? '–']);
    }
  }
  cols.push(['Active processes', x => x.u.ActiveServerProcessCount ?? '–'], ['Game sessions', x => x.u.ActiveGameSessionCount ?? '–'],
    ['Players', x => x.u.CurrentPlayerSessionCount ?? '–']);
  const rows = locs.map(l => {
    const name = l.LocationState.Location;
    return {name, l, n: ((body(data, 'cap:' + name) || {}).FleetCapacity || {}).InstanceCounts || {},
      u: (body(data, 'util:' + name) || {}).FleetUtilization || {}};
  });
  return table(cols, rows, x => x.name);
}

// isEC2 reports whether the fleet is a managed (EC2) fleet, once its attributes are known.
const isEC2 = data => {
  const f = ((body(data, 'attrs') || {}).FleetAttributes || [])[0];
  return !!f && (f.ComputeType || 'EC2') === 'EC2';
};

export const fleet = {
  path: 'fleets/:id',
  title: p => 'Fleet ' + p.id,
  queries: (p, data) => {
    const q = {
      attrs: {Op: 'DescribeFleetAttributes', Input: {FleetIds: [p.id]}},
      locations: {Op: 'DescribeFleetLocationAttributes', Input: {FleetId: p.id}},
      events: {Op: 'DescribeFleetEvents', Input: {FleetId: p.id, Limit: 20}},
      computes: {Op: 'ListCompute', Input: {FleetId: p.id, Limit: 50}},
      processes: {Op: 'Hoist.ListServerProcesses', Input: {FleetId: p.id}},
      sessions: {Op: 'DescribeGameSessions', Input: {FleetId: p.id, Limit: 20}},
    };
    const ec2 = isEC2(data);
    if (ec2) {
      q.instances = {Op: 'DescribeInstances', Input: {FleetId: p.id, Limit: 50}};
      q.ports = {Op: 'DescribeFleetPortSettings', Input: {FleetId: p.id}};
      q.runtime = {Op: 'DescribeRuntimeConfiguration', Input: {FleetId: p.id}};
    }
    for (const l of (body(data, 'locations') || {}).LocationAttributes || []) {
      const name = l.LocationState.Location;
      if (ec2) q['cap:' + name] = {Op: 'DescribeFleetLocationCapacity', Input: {FleetId: p.id, Location: name}};
      q['util:' + name] = {Op: 'DescribeFleetLocationUtilization', Input: {FleetId: p.id, Location: name}};
    }
    return q;
  },
  render: (p, data) => h('div', {},
    h('p', {class: 'crumbs'}, link('/fleets', 'Fleets'), ' / ', p.id),
    section(data, 'attrs', b => fleetAttributes((b.FleetAttributes || [])[0])),
    card('Locations: status, capacity and utilization', section(data, 'locations', () => locationTable(data, isEC2(data)))),
    card('Game sessions', section(data, 'sessions', b => sessionTable(b.GameSessions)),
      h('p', {}, link('/game-sessions?fleet=' + enc(p.id), 'All game sessions of this fleet'))),
    card('Computes', section(data, 'computes', b => table([
      ['Compute', c => link('/fleets/' + enc(p.id) + '/computes/' + enc(c.ComputeName), c.ComputeName)],
      ['Status', c => badge(c.ComputeStatus)], ['Location', c => c.Location], ['Address', c => c.IpAddress || c.DnsName],
      ['Instance', c => c.InstanceId || ''], ['Registered', c => when(c.CreationTime)]], b.ComputeList, c => c.ComputeName))),
    card('Server processes', section(data, 'processes', b => processTable(p.id, b.ServerProcesses))),
    isEC2(data) ? managedCards(data) : null,
    card('Events', section(data, 'events', b => table([
      ['Time', e => when(e.EventTime)], ['Code', e => e.EventCode], ['Message', e => e.Message]], b.Events, e => e.EventId)))),
};

// processTable lists a fleet's server processes (Hoist.ListServerProcesses), live ones first.
function processTable(fleetId, list) {
  const live = x => x.Status === 'TERMINATED' ? 1 : 0;
  const rows = [...(list || [])].sort((a, b) => live(a) - live(b)).slice(0, 100);
  return table([
    ['Process', x => h('code', {}, x.ProcessId)],
    ['Compute', x => link('/fleets/' + enc(fleetId) + '/computes/' + enc(x.ComputeName), x.ComputeName)],
    ['Status', x => badge(x.Status)], ['Health', x => badge(x.Health)], ['Port', x => x.Port || ''],
    ['Game session', x => x.GameSessionId ? sessionLink(x.GameSessionId, x.GameSessionId.split('/').pop()) : ''],
    ['Last health check', x => when(x.LastHealthCheckTime)], ['SDK', x => [x.SdkLanguage, x.SdkVersion].filter(Boolean).join(' ')],
    ['Logs', x => (x.LogPaths || []).join(', ')], ['Ended', x => x.EndTime ? when(x.EndTime) + (x.EndReason ? ' (' + x.EndReason + ')' : '') : '']],
  rows, x => x.ProcessId);
}

function fleetAttributes(f) {
  if (!f) return h('p', {class: 'error'}, 'No such fleet.');
  return card(null, fields([
    ['Name', f.Name], ['Status', badge(f.Status), 'Status'], ['Fleet ID', h('code', {}, f.FleetId)], ['ARN', h('code', {}, f.FleetArn)],
    ['Compute type', f.ComputeType || 'EC2'], ['Fleet type', f.FleetType], ['Instance type', f.InstanceType],
    ['Build', f.BuildId ? link('/builds/' + enc(f.BuildId), f.BuildId) : ''], ['Protection', f.NewGameSessionProtectionPolicy],
    ['Description', f.Description], ['Created', when(f.CreationTime)], ['Stopped actions', (f.StoppedActions || []).join(', ')],
  ]));
}

// capacityForm sets a location's desired instances (UpdateFleetCapacity), widening its
// minimum or maximum when needed.
function capacityForm(data) {
  const f = ((body(data, 'attrs') || {}).FleetAttributes || [])[0];
  const locs = ((body(data, 'locations') || {}).LocationAttributes || []).map(l => l.LocationState.Location);
  const loc = h('select', {name: 'location'}, locs.map(l => h('option', {value: l}, l)));
  const desired = h('input', {name: 'desired', id: 'desired-instances', type: 'number', min: 0, required: true});
  const msg = h('span', {class: 'muted', id: 'capacity-message'});
  const submit = async ev => {
    ev.preventDefault();
    try {
      // Widen the minimum and maximum when the new desired count is outside them.
      const n = ((body(data, 'cap:' + loc.value) || {}).FleetCapacity || {}).InstanceCounts || {};
      const want = Number(desired.value);
      await call('UpdateFleetCapacity', {FleetId: f.FleetId, Location: loc.value, DesiredInstances: want,
        MinSize: Math.min(want, n.MINIMUM ?? want), MaxSize: Math.max(want, n.MAXIMUM ?? want)});
      msg.textContent = `Desired instances in ${loc.value} set to ${desired.value}.`;
    } catch (e) {
      msg.textContent = e.message;
    }
  };
  return h('form', {class: 'filters', onsubmit: submit}, h('label', {}, 'Location', loc), h('label', {}, 'Desired instances', desired),
    h('button', {type: 'submit', id: 'set-capacity'}, 'Set'), msg);
}

// managedCards shows what only managed (EC2) fleets have: instances, runtime configuration,
// inbound ports.
function managedCards(data) {
  return [
    card('Set capacity', capacityForm(data)),
    card('Instances', section(data, 'instances', b => table([
      ['Instance', i => i.InstanceId], ['Status', i => badge(i.Status)], ['Location', i => i.Location],
      ['Address', i => i.IpAddress || i.DnsName], ['Type', i => i.Type], ['Created', i => when(i.CreationTime)]], b.Instances, i => i.InstanceId))),
    h('div', {class: 'grid2'},
      card('Runtime configuration', section(data, 'runtime', b => runtime(b.RuntimeConfiguration))),
      card('Inbound ports', section(data, 'ports', b => table([
        ['From', r => r.FromPort], ['To', r => r.ToPort], ['Protocol', r => r.Protocol], ['IP range', r => r.IpRange]], b.InboundPermissions)))),
  ];
}

function runtime(rc) {
  if (!rc) return h('p', {class: 'muted'}, 'None.');
  return h('div', {}, table([['Launch path', s => h('code', {}, s.LaunchPath)], ['Parameters', s => s.Parameters || ''],
    ['Processes', s => s.ConcurrentExecutions]], rc.ServerProcesses),
  fields([['Concurrent activations', rc.MaxConcurrentGameSessionActivations], ['Activation timeout (s)', rc.GameSessionActivationTimeoutSeconds]]));
}

function sessionTable(list) {
  return table([
    ['Game session', s => sessionLink(s.GameSessionId, s.Name || s.GameSessionId.split('/').pop())],
    ['Status', s => badge(s.Status)], ['Players', s => `${s.CurrentPlayerSessionCount}/${s.MaximumPlayerSessionCount}`],
    ['Location', s => s.Location], ['Connect', s => s.IpAddress ? `${s.DnsName || s.IpAddress}:${s.Port}` : ''],
    ['Created', s => when(s.CreationTime)]], list, s => s.GameSessionId);
}

export const compute = {
  path: 'fleets/:id/computes/:name',
  title: p => 'Compute ' + p.name,
  queries: p => ({compute: {Op: 'DescribeCompute', Input: {FleetId: p.id, ComputeName: p.name}}}),
  render: (p, data) => h('div', {},
    h('p', {class: 'crumbs'}, link('/fleets', 'Fleets'), ' / ', fleetLink(p.id), ' / ', p.name),
    section(data, 'compute', b => {
      const c = b.Compute || {};
      return card(null, fields([['Name', c.ComputeName], ['Status', badge(c.ComputeStatus), 'Status'], ['ARN', h('code', {}, c.ComputeArn)],
        ['Location', c.Location], ['IP address', c.IpAddress], ['DNS name', c.DnsName], ['Instance', c.InstanceId],
        ['Operating system', c.OperatingSystem], ['SDK endpoint', h('code', {}, c.GameLiftServiceSdkEndpoint || '')],
        ['Agent endpoint', h('code', {}, c.GameLiftAgentEndpoint || '')], ['Registered', when(c.CreationTime)]]));
    })),
};

export const gameSessions = {
  path: 'game-sessions',
  title: () => 'Game sessions',
  controls: p => filterForm('game-sessions', p, [
    {name: 'fleet', label: 'Fleet or alias ID', placeholder: 'fleet-… or alias-…'},
    {name: 'location', label: 'Location', placeholder: 'custom-…'},
    {name: 'status', label: 'Status', options: sessionStatuses},
    {name: 'q', label: 'Text on this page', placeholder: 'name, property, …'}]),
  queries: (p, data) => {
    const fleetId = p.query.get('fleet') || ((body(data, 'fleets') || {}).FleetAttributes || [])[0]?.FleetId;
    const q = {fleets: {Op: 'DescribeFleetAttributes', Input: {Limit: 1}}};
    if (fleetId) {
      const key = fleetId.startsWith('alias-') ? 'AliasId' : 'FleetId';
      q.list = {Op: 'DescribeGameSessions', Input: {[key]: fleetId, Location: p.query.get('location') || undefined,
        StatusFilter: p.query.get('status') || undefined, Limit: PAGE_SIZE, NextToken: p.query.get('token') || undefined}};
    }
    return q;
  },
  render: (p, data) => {
    if (!data.list) return h('p', {class: 'muted'}, body(data, 'fleets') ? 'There are no fleets yet.' : 'Loading…');
    const fleetId = data.list && (p.query.get('fleet') || ((body(data, 'fleets') || {}).FleetAttributes || [])[0]?.FleetId);
    return h('div', {}, h('p', {class: 'muted'}, 'Fleet ', fleetLink(fleetId)),
      section(data, 'list', b => h('div', {class: 'card'},
        sessionTable((b.GameSessions || []).filter(s => matches(s, p.query.get('q')))), pager('game-sessions', p, b.NextToken))));
  },
};

export const gameSession = {
  path: 'game-sessions/:id',
  title: p => 'Game session ' + (p.id.split('/').pop()),
  queries: p => ({
    session: {Op: 'DescribeGameSessionDetails', Input: {GameSessionId: p.id}},
    players: {Op: 'DescribePlayerSessions', Input: {GameSessionId: p.id, Limit: 50}},
  }),
  render: (p, data) => {
    const d = ((body(data, 'session') || {}).GameSessionDetails || [])[0];
    const s = d && d.GameSession;
    return h('div', {},
      h('p', {class: 'crumbs'}, link('/game-sessions' + (s ? '?fleet=' + enc(s.FleetId) : ''), 'Game sessions'), ' / ', p.id.split('/').pop()),
      section(data, 'session', () => s ? sessionDetail(s, d) : h('p', {class: 'error'}, 'No such game session.')),
      card('Player sessions', section(data, 'players', b => playerTable(b.PlayerSessions))));
  },
};

function sessionDetail(s, d) {
  const props = s.GameProperties || [];
  return h('div', {},
    card(null, fields([
      ['Name', s.Name], ['Status', badge(s.Status), 'Status'], ['Status reason', s.StatusReason],
      ['Game session ID', h('code', {}, s.GameSessionId)], ['Fleet', fleetLink(s.FleetId)], ['Location', s.Location],
      ['Compute', s.ComputeName ? link('/fleets/' + enc(s.FleetId) + '/computes/' + enc(s.ComputeName), s.ComputeName) : ''],
      ['Connection', s.IpAddress ? h('code', {}, `${s.DnsName || s.IpAddress}:${s.Port}`) : '', 'Connection'],
      ['Players', `${s.CurrentPlayerSessionCount} of ${s.MaximumPlayerSessionCount}`, 'Players'],
      ['New players', s.PlayerSessionCreationPolicy], ['Protection', d.ProtectionPolicy], ['Creator', s.CreatorId],
      ['Created', when(s.CreationTime)], ['Ended', when(s.TerminationTime)],
      ['Logs', s.Status === 'TERMINATED' ? logsButton(s.GameSessionId) : ''],
      ['Actions', s.Status === 'ACTIVE' || s.Status === 'ACTIVATING' ? terminateButtons(s.GameSessionId) : ''],
    ])),
    h('div', {class: 'grid2'},
      card('Game properties', table([['Key', x => x.Key], ['Value', x => x.Value]], props, x => x.Key)),
      card('Game session data', s.GameSessionData ? h('pre', {}, s.GameSessionData) : h('p', {class: 'muted'}, 'None.'),
        s.MatchmakerData ? [h('h2', {}, 'Matchmaker data'), h('pre', {}, s.MatchmakerData)] : null)));
}

// confirming is the game session whose Terminate button was pressed once.
let confirming = '';

// terminateButtons ends a game session after a second click: gracefully (the process is told
// to end it) or by force.
function terminateButtons(id) {
  const out = h('span', {class: 'error', id: 'action-error'});
  const end = mode => async () => {
    try {
      await call('TerminateGameSession', {GameSessionId: id, TerminationMode: mode});
      confirming = '';
    } catch (e) {
      out.textContent = e.message;
    }
  };
  if (confirming !== id) {
    return h('span', {}, h('button', {type: 'button', id: 'terminate', onclick: ev => {
      confirming = id;
      ev.target.replaceWith(terminateButtons(id));
    }}, 'Terminate…'));
  }
  return h('span', {},
    h('button', {type: 'button', id: 'terminate-graceful', onclick: end('TRIGGER_ON_PROCESS_TERMINATE')}, 'Ask the process to end it'), ' ',
    h('button', {type: 'button', id: 'terminate-force', onclick: end('FORCE_TERMINATE')}, 'Force-terminate'), ' ',
    h('button', {type: 'button', onclick: ev => { confirming = ''; ev.target.parentNode.replaceWith(terminateButtons(id)); }}, 'Cancel'), ' ', out);
}

// logsButton fetches the game session's pre-signed log URL when asked (it expires).
function logsButton(id) {
  const out = h('span', {});
  const btn = h('button', {type: 'button', onclick: async () => {
    try {
      const r = await call('GetGameSessionLogUrl', {GameSessionId: id});
      out.replaceChildren(h('a', {href: r.PreSignedUrl}, 'Download the log'));
    } catch (e) {
      out.replaceChildren(h('span', {class: 'muted'}, e.message));
    }
  }}, 'Get log link');
  return h('span', {}, btn, ' ', out);
}

function playerTable(list) {
  return table([
    ['Player session', ps => link('/player-sessions/' + enc(ps.PlayerSessionId), ps.PlayerSessionId)],
    ['Player', ps => ps.PlayerId], ['Status', ps => badge(ps.Status)],
    ['Connect', ps => ps.IpAddress ? `${ps.DnsName || ps.IpAddress}:${ps.Port}` : ''], ['Created', ps => when(ps.CreationTime)]],
  list, ps => ps.PlayerSessionId);
}

export const playerSessions = {
  path: 'player-sessions',
  title: () => 'Player sessions',
  controls: p => filterForm('player-sessions', p, [{name: 'player', label: 'Player ID'},
    {name: 'session', label: 'Game session ID'},
    {name: 'status', label: 'Status', options: ['', 'RESERVED', 'ACTIVE', 'COMPLETED', 'TIMEDOUT']}]),
  queries: p => {
    const input = {PlayerId: p.query.get('player') || undefined, GameSessionId: p.query.get('session') || undefined};
    if (!input.PlayerId && !input.GameSessionId) return {};
    return {list: {Op: 'DescribePlayerSessions', Input: {...input, PlayerSessionStatusFilter: p.query.get('status') || undefined,
      Limit: PAGE_SIZE, NextToken: p.query.get('token') || undefined}}};
  },
  render: (p, data) => data.list ? section(data, 'list', b => h('div', {class: 'card'}, playerTable(b.PlayerSessions), pager('player-sessions', p, b.NextToken)))
    : h('p', {class: 'muted'}, 'GameLift lists player sessions by player or by game session: give one of them.'),
};

export const playerSession = {
  path: 'player-sessions/:id',
  title: p => 'Player session ' + p.id,
  queries: p => ({ps: {Op: 'DescribePlayerSessions', Input: {PlayerSessionId: p.id}}}),
  render: (p, data) => section(data, 'ps', b => {
    const ps = (b.PlayerSessions || [])[0];
    if (!ps) return h('p', {class: 'error'}, 'No such player session.');
    return card(null, fields([['Player session', h('code', {}, ps.PlayerSessionId)], ['Player', ps.PlayerId],
      ['Status', badge(ps.Status), 'Status'], ['Game session', sessionLink(ps.GameSessionId)], ['Fleet', fleetLink(ps.FleetId)],
      ['Connection', ps.IpAddress ? h('code', {}, `${ps.DnsName || ps.IpAddress}:${ps.Port}`) : ''], ['Player data', ps.PlayerData],
      ['Created', when(ps.CreationTime)], ['Ended', when(ps.TerminationTime)]]));
  }),
};
