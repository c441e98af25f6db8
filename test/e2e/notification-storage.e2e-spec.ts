import Database from 'better-sqlite3';
import * as path from 'node:path';
import { Client as PgClient } from 'pg';
import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { exampleSources } from '../support/runtime-harness';
import { zipSources } from '../support/zip-writer';
import { until } from '../support/wait';

jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const PROJECTIONS = 12;
const ORDERS = 300;
const CUSTOMERS = 2;

async function uploadProjection(c: Client, url: string, parts: Record<string, string>) {
  const form = new FormData();
  form.append('file', new Blob([zipSources(exampleSources('customer-totals'))]), 'p.zip');
  for (const [k, v] of Object.entries(parts)) form.append(k, v);
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

/** Bytes the store holds for the notification log (tables and their indexes). */
async function logBytes(backend: string, env: Record<string, string>, dataDir: string): Promise<number> {
  if (backend === 'sqlite') {
    const db = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true });
    try {
      const r = db
        .prepare("SELECT SUM(pgsize) AS b FROM dbstat WHERE name LIKE 'notification%' OR name LIKE 'sqlite_autoindex_notification%'")
        .get() as { b: number };
      return Number(r.b);
    } finally {
      db.close();
    }
  }
  const pg = new PgClient({ connectionString: env.DATABASE_URL });
  await pg.connect();
  try {
    const { rows } = await pg.query(
      "SELECT SUM(pg_total_relation_size(c.oid)) AS b FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE c.relkind = 'r' AND c.relname LIKE 'notification%' AND s.nspname = current_schema()",
    );
    return Number(rows[0].b);
  } finally {
    await pg.end();
  }
}

async function pollAll(c: Client, projectionId: string): Promise<any[]> {
  const all: any[] = [];
  for (let after = 0; ;) {
    const r = await c.get(`/projections/${projectionId}/notifications?afterSequence=${after}&limit=1000`);
    if (r.body.notifications.length === 0) return all;
    all.push(...r.body.notifications);
    after = r.body.notifications[r.body.notifications.length - 1].sequence;
  }
}

describe.each(STORE_BACKENDS)('notification storage on %s', (backend) => {
  let svc: RunningService & { config: { dataDir: string } };
  let env: Record<string, string>;
  let c: Client;
  beforeAll(async () => {
    env = await envFor(backend);
    svc = (await startService({ ...env, LANE_SWEEP_MS: '200' })) as any;
    c = await newTenant(svc.url, `storage-${backend}`);
  });
  afterAll(() => svc?.close());

  it('stores a state text once however many projections log it: the log grows with the changes, not with projections × state size', async () => {
    const ids: string[] = [];
    for (let p = 0; p < PROJECTIONS; p++) {
      const up = await uploadProjection(c, svc.url, { config: JSON.stringify({ name: `totals-${p}` }) });
      expect(up.status).toBe(202);
      const s = await until(
        () => c.get(`/projections/${up.body.uploadId}/status`),
        (r) => r.body?.type === 'runtime',
        120_000,
      );
      ids.push(s.body.projectionId);
    }
    for (let i = 0; i < ORDERS; i += 20) {
      const batch = [];
      for (let j = i; j < i + 20; j++) {
        batch.push(
          c.post('/events', {
            aggregateId: `order-${j}`,
            eventType: 'OrderPlaced',
            data: { customerId: `cust-${j % CUSTOMERS}`, lines: [{ sku: 'x', qty: 1, price: (j % 7) + 1 }] },
          }),
        );
      }
      for (const r of await Promise.all(batch)) expect(r.status).toBe(201);
    }
    const logs: any[][] = [];
    for (const id of ids)
      logs.push(
        await until(
          () => pollAll(c, id),
          (l) => l.length === ORDERS,
          180_000,
        ),
      );

    // Every projection logged the same changes, each with its whole state, exactly as applied.
    let stateBytes = 0;
    for (const log of logs) {
      const counts = new Map<string, number>();
      for (const n of log) {
        counts.set(n.stateKey, (counts.get(n.stateKey) ?? 0) + 1);
        expect(n.state.orderCount).toBe(counts.get(n.stateKey));
        expect(Object.keys(n.state.orders)).toHaveLength(counts.get(n.stateKey)!);
        stateBytes += Buffer.byteLength(JSON.stringify(n.state));
      }
      // The same texts as the first projection's (in another interleaving of the keys).
      const texts = (l: any[]) => l.map((n) => JSON.stringify(n.state)).sort();
      expect(texts(log).join('\n') === texts(logs[0]).join('\n')).toBe(true);
    }
    const stored = await logBytes(backend, env, svc.config.dataDir);
    const perNotification = stored / (PROJECTIONS * ORDERS);
    console.log(
      `${backend}: ${PROJECTIONS * ORDERS} notifications carrying ${Math.round(stateBytes / 1024)} KiB of state; the log takes ${Math.round(stored / 1024)} KiB (${Math.round(perNotification)} B each)`,
    );
    // A copy per notification takes more than the states themselves (rows and indexes on top); one
    // per distinct text takes a twelfth of them plus the rows.
    expect(stored).toBeLessThan(stateBytes * 0.7);
  });
});
