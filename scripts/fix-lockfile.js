#!/usr/bin/env node
// The npm registry reachable from these machines does not serve every platform build of some
// native packages (msgpackr-extract's macOS/Windows/32-bit ARM builds, optional dependencies of
// bullmq's msgpackr; unrs-resolver's non-Linux-x64/arm64 bindings, of eslint-plugin-import-x), so
// `npm install` leaves them out of package-lock.json and `npm ci` then refuses the lock as out of
// sync. Entries that only name the platform are enough: npm skips them here without fetching.
// Run after any `npm install` that rewrites the lock: node scripts/fix-lockfile.js
const fs = require('node:fs');
const path = require('node:path');

const LIBC = { gnu: 'glibc', gnueabihf: 'glibc', musl: 'musl', musleabihf: 'musl' };
/** Each native package: how its platform packages' names say os, cpu and libc. */
const NATIVE = [
  { parent: 'msgpackr-extract', platform: /msgpackr-extract-([a-z0-9]+)-([a-z0-9]+)$/ },
  { parent: 'unrs-resolver', platform: /resolver-binding-([a-z0-9]+)-([a-z0-9]+)(?:-([a-z0-9]+))?$/ },
];

const file = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
let added = 0;
for (const { parent, platform } of NATIVE) {
  const entry = lock.packages[`node_modules/${parent}`];
  if (!entry) continue;
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key]) continue;
    const [, os, cpu, abi] = platform.exec(name) ?? [];
    if (!os) continue;
    lock.packages[key] = {
      version,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(LIBC[abi] ? { libc: [LIBC[abi]] } : {}),
      license: 'MIT',
      optional: true,
      os: [os],
    };
    added++;
  }
}
if (added) {
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => a.localeCompare(b, 'en')));
  fs.writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
}
console.log(`package-lock.json: ${added} platform entries added`);
