import * as fs from 'node:fs';
import * as path from 'node:path';
import { exampleSources, REPO } from './runtime-harness';
import { settle, until } from './wait';
import { zipSources } from './zip-writer';

/** Uploading tenants' C# (examples or test fixtures) and waiting until it runs. */

export type Sources = { path: string; content: string }[];

/** Named files of test/fixtures/<folder>. */
export function fixtureSources(folder: string, files: string[]): Sources {
  return files.map((f) => ({ path: f, content: fs.readFileSync(path.join(REPO, 'test', 'fixtures', folder, f), 'utf8') }));
}

export { exampleSources };

// The waits live in wait.ts (unit specs import them without this file's runtime harness); re-exported for the e2e specs.
export { settle, until };

async function getJson(url: string, key: string): Promise<any> {
  const res = await fetch(url, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, body: await res.json() };
}

/** Uploads a reducer archive and waits for its compile; fails with the compile error if any. Compiling binds it. */
export async function deployReducer(url: string, key: string, reducerId: string, sources: Sources): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([zipSources(sources)], { type: 'application/zip' }), 'reducer.zip');
  form.append('reducerId', reducerId);
  const res = await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  if (res.status !== 202) throw new Error(`reducer upload ${reducerId}: ${res.status} ${await res.text()}`);
  const st = await until(
    () => getJson(`${url}/reducers/${reducerId}/status`, key),
    (r) => r.body.status !== 'pending_compilation',
    120_000,
    `compile of ${reducerId}`,
  );
  if (st.body.status !== 'compiled') throw new Error(`reducer ${reducerId} did not compile: ${JSON.stringify(st.body)}`);
}

/** Uploads a projection archive (optional `config` part); returns the upload response body. */
export async function uploadProjection(url: string, key: string, sources: Sources, config?: unknown): Promise<any> {
  const form = new FormData();
  form.append('file', new Blob([zipSources(sources)], { type: 'application/zip' }), 'projection.zip');
  if (config !== undefined) form.append('config', JSON.stringify(config));
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  const body = await res.json();
  if (res.status !== 202) throw new Error(`projection upload: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** Waits until the upload is compiled and active (type 'runtime'); returns the stable projectionId. */
export async function projectionActive(url: string, key: string, uploadId: string): Promise<string> {
  const st = await until(
    () => getJson(`${url}/projections/${uploadId}/status`, key),
    (r) => r.body.type === 'runtime' || r.body.status === 'failed',
    120_000,
    `deploy of ${uploadId}`,
  );
  if (st.body.status !== 'compiled') throw new Error(`projection did not compile: ${JSON.stringify(st.body)}`);
  return st.body.projectionId;
}

/** Waits until `uploadId` is the projection's active version with nothing pending (a redeploy promoted). */
export async function projectionPromoted(url: string, key: string, projectionId: string, uploadId: string): Promise<void> {
  await until(
    () => getJson(`${url}/projections/${projectionId}/status`, key),
    (r) => r.body.activeVersion?.uploadId === uploadId && !r.body.pendingVersion,
    180_000,
    `promotion of ${uploadId}`,
  );
}

/** Binds `className` of `reducerId` to `aggregateType` and waits for the catch-up over that type to finish. */
export async function bindAndCatchUp(url: string, key: string, aggregateType: string, reducerId: string, className: string): Promise<void> {
  const res = await fetch(`${url}/aggregate-types/${aggregateType}`, {
    method: 'PUT',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ reducerId, className }),
  });
  if (res.status !== 200) throw new Error(`bind ${aggregateType}: ${res.status} ${await res.text()}`);
  await until(
    () => getJson(`${url}/aggregate-types/${aggregateType}`, key),
    (r) => r.body.catchUp?.status === 'done',
    60_000,
    `catch-up of ${aggregateType}`,
  );
}
