import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { Store } from '../../src/store/store.port';
import { testEventStore } from './event-store.conformance';

const files = new Map<Store, string>();
const dirs: string[] = [];

testEventStore('sqlite', {
  concurrentInstances: false,
  async fresh() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-sqlite-'));
    dirs.push(dir);
    const file = path.join(dir, 'events.sqlite');
    const store = new SqliteStore({ file });
    await store.migrate();
    files.set(store, file);
    return store;
  },
  async sameStorage(of) {
    const store = new SqliteStore({ file: files.get(of)! });
    await store.migrate();
    files.set(store, files.get(of)!);
    return store;
  },
});

afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
