#!/usr/bin/env node
// The append path's CPU profile in shares (BENCHMARKS.md, issue 25 item 1):
//   node scripts/cpu-profile-summary.js <main thread .cpuprofile> [top N]
// Take one with: node --cpu-prof --cpu-prof-dir=DIR dist/src/main.js under append load (32 connections);
// the main thread's profile is the larger file. Shares are of the busy (non-idle) samples after the
// first append (startup excluded): by what is on the stack, then the top self-time frames.
'use strict';
const fs = require('fs');
const p = JSON.parse(fs.readFileSync(process.argv[2]));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children || []) parent.set(c, n.id);
const stackOf = (id) => {
  const s = [];
  for (let c = id; c !== undefined; c = parent.get(c)) s.push(byId.get(c).callFrame);
  return s;
};
const CATS = [
  [
    'key auth (TenantDirectory.verify: hash, row read)',
    (s) => s.some((f) => f.functionName === 'verify' && f.url.includes('tenant-directory')),
  ],
  ['body validation (validateDto)', (s) => s.some((f) => f.functionName === 'validateDto')],
  [
    'AsyncResource.bind (content-type parser)',
    (s) =>
      s[0].functionName === 'deprecate' ||
      s.some((f) => (f.functionName === 'bind' && f.url === 'node:async_hooks') || f.functionName === 'leanBind'),
  ],
  ['JSON parse + exact text (content-type parser)', (s) => s.some((f) => f.url.includes('exact-json-http'))],
  ['pino (child logger, redaction, log line)', (s) => s.some((f) => /pino|redact/.test(f.url))],
  ['metrics (prom-client, http-metrics hook)', (s) => s.some((f) => /prom-client|http-metrics|app-metrics/.test(f.url))],
  ['quota gate', (s) => s.some((f) => f.url.includes('quota'))],
  [
    'group commit + writer message (batcher, worker client)',
    (s) => s.some((f) => /append-batcher|append-writer-thread|postgres-event-log|postgres-append|pg\/lib|pg-protocol/.test(f.url)),
  ],
  ['reply write (writev)', (s) => s.some((f) => f.functionName === 'writev' || f.functionName === 'writevGeneric')],
  ['garbage collector', (s) => s[0].functionName === '(garbage collector)'],
  ['other: Nest (self time in @nestjs/*: router, guards, params, response)', (s) => s[0].url.includes('@nestjs')],
  [
    'other: Fastify (self time in fastify, find-my-way, middie, secure-json-parse)',
    (s) => /node_modules\/(fastify|find-my-way|@fastify|secure-json-parse|avvio|light-my-request)/.test(s[0].url),
  ],
  ["other: the service's own hooks and handler (self time in dist/src)", (s) => s[0].url.includes('/dist/src/')],
  ['other: Node core (HTTP parser, sockets, streams, events, timers, promises)', (s) => s[0].url.startsWith('node:') || s[0].url === ''],
];
let first = p.samples.findIndex((id) => stackOf(id).some((f) => f.url.includes('events.controller')));
if (first < 0) first = 0;
const sums = new Map(CATS.map(([n]) => [n, 0]));
let busy = 0,
  other = 0;
for (let i = first; i < p.samples.length; i++) {
  const s = stackOf(p.samples[i]);
  if (s[0].functionName === '(idle)') continue;
  const dt = p.timeDeltas[i] || 0;
  busy += dt;
  const cat = CATS.find(([, test]) => test(s));
  if (cat) sums.set(cat[0], sums.get(cat[0]) + dt);
  else other += dt;
}
console.log('| on the stack | share of busy |\n|---|---:|');
for (const [n, t] of sums) console.log(`| ${n} | ${((100 * t) / busy).toFixed(1)} % |`);
console.log(`| the rest (native frames: program, microtasks, other packages) | ${((100 * other) / busy).toFixed(1)} % |`);
const short = (u) =>
  u
    .replace(/^.*node_modules\//, '')
    .replace(/^.*\/dist\//, '')
    .replace(/^file:\/\//, '');
const selfBy = new Map();
for (let i = first; i < p.samples.length; i++) {
  const f = byId.get(p.samples[i]).callFrame;
  if (f.functionName === '(idle)') continue;
  const k = `${f.functionName || '(anonymous)'} ${short(f.url)}${f.url ? ':' + (f.lineNumber + 1) : ''}`;
  selfBy.set(k, (selfBy.get(k) || 0) + (p.timeDeltas[i] || 0));
}
console.log('\ntop self time (share of busy):');
for (const [k, t] of [...selfBy].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] || 15)))
  console.log(`${((100 * t) / busy).toFixed(1)} %  ${k}`);
