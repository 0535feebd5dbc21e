// views.js: every page of the console, in the order routes are matched, and the navigation.

import * as hosting from './views-hosting.js';
import * as more from './views-more.js';

export const views = [
  hosting.fleets, hosting.fleet, hosting.compute,
  hosting.gameSessions, hosting.gameSession, hosting.playerSessions, hosting.playerSession,
  more.aliases, more.alias, more.builds, more.build, more.locations,
  more.queues, more.queue, more.placements, more.placement,
  more.configs, more.config, more.tickets, more.ticket,
  more.groups, more.group, more.gameServer,
];

export const nav = [
  ['fleets', 'Fleets'], ['game-sessions', 'Game sessions'], ['player-sessions', 'Player sessions'],
  ['aliases', 'Aliases'], ['builds', 'Builds'], ['locations', 'Locations'], ['queues', 'Queues'],
  ['placements', 'Placements'], ['matchmaking', 'Matchmaking'], ['tickets', 'Tickets'], ['fleetiq', 'FleetIQ'],
];
