#!/usr/bin/env node
// The npm registry reachable from these machines does not serve msgpackr-extract's macOS,
// Windows and 32-bit ARM builds (optional dependencies of bullmq's msgpackr), so `npm install`
// leaves them out of package-lock.json and `npm ci` then refuses the lock as out of sync.
// Entries that only name the platform are enough: npm skips them on Linux x64 without fetching.
// Run after any `npm install` that rewrites the lock: node scripts/fix-lockfile.js
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const extract = lock.packages['node_modules/msgpackr-extract'];
if (!extract) process.exit(0);
let added = 0;
for (const [name, version] of Object.entries(extract.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  const [, os, cpu] = /msgpackr-extract-([a-z0-9]+)-([a-z0-9]+)$/.exec(name) ?? [];
  lock.packages[key] = { version, cpu: [cpu], license: 'MIT', optional: true, os: [os] };
  added++;
}
if (added) {
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => a.localeCompare(b, 'en')));
  fs.writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
}
console.log(`package-lock.json: ${added} platform entries added`);
