import { enc, Output } from './deploy';
import { ServiceClient, ServiceError } from './service-client';

const json = (v: unknown) => JSON.stringify(v, null, 2);

/**
 * `status`: who the key is and the tenant's projections, one a line. `status projection|reducer|aggregate-type <id>`:
 * that record as the service answers it (a projection's with its apply lag).
 */
export async function status(client: ServiceClient, args: string[], output: Output): Promise<number> {
  const [what, id] = args;
  if (!what) {
    const me = await client.expect(client.get('/auth/whoami'), 200);
    output.out(`tenant ${me.tenantId}${me.name ? ` (${me.name})` : ''} at ${client.config.url}`);
    const { projections } = await client.expect(client.get('/projections'), 200);
    for (const p of projections) {
      const pending = p.pendingVersion ? `, pending ${p.pendingVersion.uploadId}` : '';
      output.out(`projection ${p.projectionId} ${p.name}: active ${p.activeVersion?.uploadId ?? 'none'}${pending}`);
    }
    return 0;
  }
  if (!id) throw new ServiceError(`usage: esctl status ${what} <id>`);
  const path =
    what === 'projection'
      ? `/projections/${enc(id)}/status?include=lag`
      : what === 'reducer'
        ? `/reducers/${enc(id)}/status`
        : what === 'aggregate-type'
          ? `/aggregate-types/${enc(id)}`
          : null;
  if (!path) throw new ServiceError(`status of what? projection, reducer or aggregate-type (got '${what}')`);
  const record = await client.expect(client.get(path), 200);
  output.out(json(record));
  return record.status === 'failed' ? 1 : 0;
}

/**
 * `state projection <id> <key>` (a 202 "catching up" answer is printed as it is, exit 0) or
 * `state aggregate <type> <id>`.
 */
export async function state(client: ServiceClient, args: string[], output: Output): Promise<number> {
  const [what, a, b] = args;
  if (!a || !b || (what !== 'projection' && what !== 'aggregate')) {
    throw new ServiceError('usage: esctl state projection <projectionId> <key> | esctl state aggregate <type> <aggregateId>');
  }
  const path = what === 'projection' ? `/projections/${enc(a)}/state/${enc(b)}` : `/aggregate-types/${enc(a)}/${enc(b)}/state`;
  output.out(json(await client.expect(client.get(path), 200, 202)));
  return 0;
}
