// views-more.js: aliases, builds, locations, queues and placements, matchmaking
// configurations and tickets, FleetIQ game server groups and game servers.

import {h, badge, link, enc, when, table, fields, card} from './dom.js';
import {body, section, listView, lookupView} from './common.js';

const fleetLink = id => id ? link('/fleets/' + enc(id), id) : '';

export const aliases = listView({
  path: 'aliases', title: 'Aliases', op: 'ListAliases',
  input: p => ({Name: p.query.get('name') || undefined, RoutingStrategyType: p.query.get('type') || undefined}),
  filters: [{name: 'name', label: 'Name'}, {name: 'type', label: 'Routing', options: ['', 'SIMPLE', 'TERMINAL']}],
  items: b => b.Aliases || [], id: a => a.AliasId,
  columns: [['Alias', a => link('/aliases/' + enc(a.AliasId), a.AliasId)], ['Name', a => a.Name],
    ['Routing', a => a.RoutingStrategy?.Type], ['Fleet', a => fleetLink(a.RoutingStrategy?.FleetId)], ['Updated', a => when(a.LastUpdatedTime)]],
});

export const alias = {
  path: 'aliases/:id',
  title: p => 'Alias ' + p.id,
  queries: p => ({alias: {Op: 'DescribeAlias', Input: {AliasId: p.id}}}),
  render: (p, data) => h('div', {}, h('p', {class: 'crumbs'}, link('/aliases', 'Aliases'), ' / ', p.id),
    section(data, 'alias', b => {
      const a = b.Alias || {}, r = a.RoutingStrategy || {};
      return card(null, fields([['Name', a.Name], ['Alias ID', h('code', {}, a.AliasId)], ['ARN', h('code', {}, a.AliasArn)],
        ['Description', a.Description], ['Routing', r.Type, 'Routing'], ['Fleet', fleetLink(r.FleetId)], ['Message', r.Message],
        ['Created', when(a.CreationTime)], ['Updated', when(a.LastUpdatedTime)],
        ['Game sessions', link('/game-sessions?fleet=' + enc(a.AliasId), 'Game sessions through this alias')]]));
    })),
};

export const builds = listView({
  path: 'builds', title: 'Builds', op: 'ListBuilds',
  input: p => ({Status: p.query.get('status') || undefined}),
  filters: [{name: 'status', label: 'Status', options: ['', 'INITIALIZED', 'READY', 'FAILED']}],
  items: b => b.Builds || [], id: b => b.BuildId,
  columns: [['Build', b => link('/builds/' + enc(b.BuildId), b.BuildId)], ['Name', b => b.Name], ['Version', b => b.Version],
    ['Status', b => badge(b.Status)], ['OS', b => b.OperatingSystem], ['Size', b => b.SizeOnDisk ?? ''], ['Created', b => when(b.CreationTime)]],
});

export const build = {
  path: 'builds/:id',
  title: p => 'Build ' + p.id,
  queries: p => ({build: {Op: 'DescribeBuild', Input: {BuildId: p.id}}, fleets: {Op: 'ListFleets', Input: {BuildId: p.id, Limit: 50}}}),
  render: (p, data) => h('div', {}, h('p', {class: 'crumbs'}, link('/builds', 'Builds'), ' / ', p.id),
    section(data, 'build', b => {
      const x = b.Build || {};
      return card(null, fields([['Name', x.Name], ['Version', x.Version], ['Status', badge(x.Status), 'Status'],
        ['Build ID', h('code', {}, x.BuildId)], ['ARN', h('code', {}, x.BuildArn)], ['Operating system', x.OperatingSystem],
        ['Server SDK', x.ServerSdkVersion], ['Size on disk', x.SizeOnDisk], ['Created', when(x.CreationTime)]]));
    }),
    card('Fleets of this build', section(data, 'fleets', b => table([['Fleet', id => fleetLink(id)]], b.FleetIds, id => id)))),
};

export const locations = listView({
  path: 'locations', title: 'Locations', op: 'ListLocations',
  filters: [{name: 'kind', label: 'Kind', options: ['', 'AWS', 'CUSTOM']}],
  input: p => ({Filters: p.query.get('kind') ? [p.query.get('kind')] : undefined}),
  items: b => b.Locations || [], id: l => l.LocationName,
  columns: [['Location', l => l.LocationName], ['ARN', l => h('code', {}, l.LocationArn || '')]],
});

export const queues = listView({
  path: 'queues', title: 'Queues', op: 'DescribeGameSessionQueues',
  items: b => b.GameSessionQueues || [], id: q => q.Name,
  columns: [['Queue', q => link('/queues/' + enc(q.Name), q.Name)], ['Timeout (s)', q => q.TimeoutInSeconds],
    ['Destinations', q => (q.Destinations || []).map(d => d.DestinationArn.split('/').pop()).join(', ')]],
});

export const queue = {
  path: 'queues/:name',
  title: p => 'Queue ' + p.name,
  queries: p => ({queue: {Op: 'DescribeGameSessionQueues', Input: {Names: [p.name]}}}),
  render: (p, data) => h('div', {}, h('p', {class: 'crumbs'}, link('/queues', 'Queues'), ' / ', p.name),
    section(data, 'queue', b => {
      const q = (b.GameSessionQueues || [])[0];
      if (!q) return h('p', {class: 'error'}, 'No such queue.');
      return h('div', {}, card(null, fields([['Name', q.Name], ['ARN', h('code', {}, q.GameSessionQueueArn)],
        ['Timeout (s)', q.TimeoutInSeconds], ['Notification target', q.NotificationTarget], ['Custom event data', q.CustomEventData],
        ['Allowed locations', (q.FilterConfiguration?.AllowedLocations || []).join(', ')],
        ['Priority', (q.PriorityConfiguration?.PriorityOrder || []).join(' → ')]])),
      card('Destinations', table([['Destination', d => h('code', {}, d.DestinationArn)],
        ['Fleet', d => d.DestinationArn.includes(':fleet/') ? fleetLink(d.DestinationArn.split('/').pop()) : '']], q.Destinations)),
      card('Player latency policies', table([['Max latency (ms)', x => x.MaximumIndividualPlayerLatencyMilliseconds],
        ['For (s)', x => x.PolicyDurationSeconds ?? 'rest']], q.PlayerLatencyPolicies)));
    })),
};

export const placements = lookupView({
  path: 'placements', title: 'Game session placements', label: 'Placement ID', detail: 'placements',
  note: 'GameLift has no operation that lists placements: open one by the ID given to StartGameSessionPlacement.',
});

export const placement = {
  path: 'placements/:id',
  title: p => 'Placement ' + p.id,
  queries: p => ({pl: {Op: 'DescribeGameSessionPlacement', Input: {PlacementId: p.id}}}),
  render: (p, data) => h('div', {}, h('p', {class: 'crumbs'}, link('/placements', 'Placements'), ' / ', p.id),
    section(data, 'pl', b => {
      const x = b.GameSessionPlacement || {};
      return h('div', {}, card(null, fields([['Placement', h('code', {}, x.PlacementId)], ['Status', badge(x.Status), 'Status'],
        ['Queue', x.GameSessionQueueName ? link('/queues/' + enc(x.GameSessionQueueName), x.GameSessionQueueName) : ''],
        ['Game session', x.GameSessionArn ? link('/game-sessions/' + enc(x.GameSessionArn), x.GameSessionArn) : ''],
        ['Name', x.GameSessionName], ['Location', x.GameSessionRegion], ['Connection', x.IpAddress ? `${x.DnsName || x.IpAddress}:${x.Port}` : ''],
        ['Max players', x.MaximumPlayerSessionCount], ['Started', when(x.StartTime)], ['Ended', when(x.EndTime)]])),
      card('Placed player sessions', table([['Player', s => s.PlayerId], ['Player session', s => link('/player-sessions/' + enc(s.PlayerSessionId), s.PlayerSessionId)]],
        x.PlacedPlayerSessions)));
    })),
};

export const configs = listView({
  path: 'matchmaking', title: 'Matchmaking configurations', op: 'DescribeMatchmakingConfigurations',
  items: b => b.Configurations || [], id: c => c.Name,
  columns: [['Configuration', c => link('/matchmaking/' + enc(c.Name), c.Name)], ['Rule set', c => c.RuleSetName],
    ['Mode', c => c.FlexMatchMode || 'WITH_QUEUE'], ['Acceptance', c => c.AcceptanceRequired ? 'required' : 'no'],
    ['Timeout (s)', c => c.RequestTimeoutSeconds], ['Created', c => when(c.CreationTime)]],
});

export const config = {
  path: 'matchmaking/:name',
  title: p => 'Matchmaking configuration ' + p.name,
  queries: (p, data) => {
    const q = {config: {Op: 'DescribeMatchmakingConfigurations', Input: {Names: [p.name]}}};
    const c = ((body(data, 'config') || {}).Configurations || [])[0];
    if (c) q.rules = {Op: 'DescribeMatchmakingRuleSets', Input: {Names: [c.RuleSetName]}};
    return q;
  },
  render: (p, data) => h('div', {}, h('p', {class: 'crumbs'}, link('/matchmaking', 'Matchmaking'), ' / ', p.name),
    section(data, 'config', b => {
      const c = (b.Configurations || [])[0];
      if (!c) return h('p', {class: 'error'}, 'No such configuration.');
      return card(null, fields([['Name', c.Name], ['ARN', h('code', {}, c.ConfigurationArn)], ['Rule set', c.RuleSetName],
        ['Mode', c.FlexMatchMode || 'WITH_QUEUE'], ['Queues', (c.GameSessionQueueArns || []).map(a => link('/queues/' + enc(a.split('/').pop()), a.split('/').pop()))],
        ['Acceptance', c.AcceptanceRequired ? `required, ${c.AcceptanceTimeoutSeconds} s` : 'not required'],
        ['Request timeout (s)', c.RequestTimeoutSeconds], ['Backfill', c.BackfillMode], ['Notification target', c.NotificationTarget],
        ['Game session data', c.GameSessionData], ['Created', when(c.CreationTime)]]));
    }),
    card('Rule set', data.rules ? section(data, 'rules', b => h('pre', {}, prettyJSON((b.RuleSets || [])[0]?.RuleSetBody))) : null)),
};

function prettyJSON(s) {
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch { return s || ''; }
}

export const tickets = lookupView({
  path: 'tickets', title: 'Matchmaking tickets', label: 'Ticket ID', detail: 'tickets',
  note: 'GameLift has no operation that lists tickets: open one by the ID given to StartMatchmaking.',
});

export const ticket = {
  path: 'tickets/:id',
  title: p => 'Ticket ' + p.id,
  queries: p => ({t: {Op: 'DescribeMatchmaking', Input: {TicketIds: [p.id]}}}),
  render: (p, data) => h('div', {}, h('p', {class: 'crumbs'}, link('/tickets', 'Tickets'), ' / ', p.id),
    section(data, 't', b => {
      const t = (b.TicketList || [])[0];
      if (!t) return h('p', {class: 'error'}, 'No such ticket.');
      const ci = t.GameSessionConnectionInfo || {};
      return h('div', {}, card(null, fields([['Ticket', h('code', {}, t.TicketId)], ['Status', badge(t.Status), 'Status'],
        ['Reason', t.StatusReason], ['Message', t.StatusMessage],
        ['Configuration', t.ConfigurationName ? link('/matchmaking/' + enc(t.ConfigurationName), t.ConfigurationName) : ''],
        ['Game session', ci.GameSessionArn ? link('/game-sessions/' + enc(ci.GameSessionArn), ci.GameSessionArn) : ''],
        ['Connection', ci.IpAddress ? `${ci.DnsName || ci.IpAddress}:${ci.Port}` : ''],
        ['Started', when(t.StartTime)], ['Ended', when(t.EndTime)], ['Estimated wait (s)', t.EstimatedWaitTime]])),
      card('Players', table([['Player', x => x.PlayerId], ['Team', x => x.Team || ''],
        ['Player session', x => (ci.MatchedPlayerSessions || []).find(m => m.PlayerId === x.PlayerId)?.PlayerSessionId || '']], t.Players, x => x.PlayerId)));
    })),
};

export const groups = listView({
  path: 'fleetiq', title: 'FleetIQ game server groups', op: 'ListGameServerGroups',
  items: b => b.GameServerGroups || [], id: g => g.GameServerGroupName,
  columns: [['Group', g => link('/fleetiq/' + enc(g.GameServerGroupName), g.GameServerGroupName)], ['Status', g => badge(g.Status)],
    ['Balancing', g => g.BalancingStrategy], ['Protection', g => g.GameServerProtectionPolicy],
    ['Instance types', g => (g.InstanceDefinitions || []).map(d => d.InstanceType).join(', ')], ['Created', g => when(g.CreationTime)]],
});

export const group = {
  path: 'fleetiq/:name',
  title: p => 'Game server group ' + p.name,
  queries: p => ({
    group: {Op: 'DescribeGameServerGroup', Input: {GameServerGroupName: p.name}},
    servers: {Op: 'ListGameServers', Input: {GameServerGroupName: p.name, Limit: 100}},
    instances: {Op: 'DescribeGameServerInstances', Input: {GameServerGroupName: p.name, Limit: 100}},
  }),
  render: (p, data) => h('div', {}, h('p', {class: 'crumbs'}, link('/fleetiq', 'FleetIQ'), ' / ', p.name),
    section(data, 'group', b => {
      const g = b.GameServerGroup || {};
      return card(null, fields([['Name', g.GameServerGroupName], ['Status', badge(g.Status), 'Status'], ['Reason', g.StatusReason],
        ['ARN', h('code', {}, g.GameServerGroupArn)], ['Balancing', g.BalancingStrategy], ['Protection', g.GameServerProtectionPolicy],
        ['Suspended', (g.SuspendedActions || []).join(', ')], ['Created', when(g.CreationTime)], ['Updated', when(g.LastUpdatedTime)]]));
    }),
    card('Game servers', section(data, 'servers', b => table([
      ['Game server', s => link('/fleetiq/' + enc(p.name) + '/' + enc(s.GameServerId), s.GameServerId)],
      ['Utilization', s => badge(s.UtilizationStatus)], ['Claim', s => s.ClaimStatus ? badge(s.ClaimStatus) : ''], ['Instance', s => s.InstanceId],
      ['Connection', s => s.ConnectionInfo || ''], ['Last health check', s => when(s.LastHealthCheckTime)]], b.GameServers, s => s.GameServerId))),
    card('Instances', section(data, 'instances', b => table([['Instance', i => i.InstanceId], ['Status', i => badge(i.InstanceStatus)]],
      b.GameServerInstances, i => i.InstanceId)))),
};

export const gameServer = {
  path: 'fleetiq/:name/:id',
  title: p => 'Game server ' + p.id,
  queries: p => ({gs: {Op: 'DescribeGameServer', Input: {GameServerGroupName: p.name, GameServerId: p.id}}}),
  render: (p, data) => h('div', {}, h('p', {class: 'crumbs'}, link('/fleetiq', 'FleetIQ'), ' / ', link('/fleetiq/' + enc(p.name), p.name), ' / ', p.id),
    section(data, 'gs', b => {
      const s = b.GameServer || {};
      return card(null, fields([['Game server', s.GameServerId], ['Utilization', badge(s.UtilizationStatus), 'Status'], ['Claim', s.ClaimStatus ? badge(s.ClaimStatus) : 'not claimed'],
        ['Instance', s.InstanceId], ['Connection', s.ConnectionInfo], ['Data', s.GameServerData ? h('pre', {}, s.GameServerData) : ''],
        ['Registered', when(s.RegistrationTime)], ['Last claimed', when(s.LastClaimTime)], ['Last health check', when(s.LastHealthCheckTime)]]));
    })),
};
