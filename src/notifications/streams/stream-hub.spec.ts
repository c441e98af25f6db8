import { EmptyEventSource, FakeSource, PROJECTION, range, TENANT, until } from '../../../test/support/stream-transport-fakes';
import { DomainError } from '../../common/domain-error';
import { StoredEvent } from '../../store/event-log.port';
import { StreamHub } from './stream-hub';
import { StreamLimiter } from './stream-limiter';
import { StreamTransport } from './stream-transport.port';
import { NO_TENANT_STREAM_QUOTA } from './tenant-stream-quota.port';
import { EventEmitter } from 'events';

class Recording<T> implements StreamTransport<T> {
  readonly sent: T[] = [];
  revoked = 0;
  send(item: T): boolean {
    this.sent.push(item);
    return true;
  }
  failed(): void {}
  keyRevoked(): void {
    this.revoked++;
  }
}

/** A connection being admitted: a socket or response stand-in whose 'close' gives its slots back. */
class PendingConnection extends EventEmitter {
  destroyed = false;
  close(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

const OWNER = { tenantId: TENANT, keyHash: 'hash-of-key-a' };
const OPTIONS = { pageSize: 10, pingIntervalMs: 10_000, heartbeatMs: 10_000, maxBufferedBytes: 1 << 20 };

describe('StreamHub', () => {
  let source: FakeSource;
  let limiter: StreamLimiter;
  let hub: StreamHub;
  let revoke: (() => void) | undefined;

  beforeEach(() => {
    source = new FakeSource();
    source.watchKey = (_hash: string, onInvalid: () => void) => {
      revoke = onInvalid;
      return () => (revoke = undefined);
    };
    limiter = new StreamLimiter({ perKey: 1, perInstance: 10 });
    hub = new StreamHub(source, new EmptyEventSource(), limiter, NO_TENANT_STREAM_QUOTA, OPTIONS);
    source.hub = hub;
  });

  it("wakes the cursors of the projection's streams, and none once their connection left", async () => {
    source.append(2);
    const connection = new PendingConnection();
    const stream = await hub.admit(OWNER, 'websocket', connection, { kind: 'projection', projectionId: PROJECTION });
    const transport = new Recording<{ sequence: number }>();
    const cursor = hub.open(stream as never, transport);
    expect(hub.streamedProjections()).toEqual([[TENANT, PROJECTION]]);
    source.append(3); // wakes through the hub: hub.wakeProjection → the cursor
    await until(() => transport.sent.length === 3, 'the live notifications');
    expect(transport.sent.map((n) => n.sequence)).toEqual(range(3, 5));
    hub.leave(cursor);
    expect(hub.streamedProjections()).toEqual([]);
    expect(hub.openCount()).toBe(0);
    source.append(1);
    expect(source.readsInFlight).toBe(0);
    connection.close();
    expect(limiter.count()).toBe(0);
  });

  it('takes the key slot before its checks and gives it back when the connection closes, even if refused', async () => {
    const refused = new PendingConnection();
    await expect(hub.admit(OWNER, 'sse', refused, { kind: 'projection', projectionId: 'unknown' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(limiter.count()).toBe(1);
    const over = hub.admit(OWNER, 'websocket', new PendingConnection(), { kind: 'projection', projectionId: PROJECTION });
    await expect(over).rejects.toMatchObject({ code: 'TOO_MANY_STREAMS' });
    refused.close();
    expect(limiter.count()).toBe(0);
  });

  it('checks the cursor, then the projection, and SSE only where the projection allows it', async () => {
    const ask = (transport: 'sse' | 'websocket', projectionId: string | null, text?: string) =>
      hub
        .admit(OWNER, transport, new PendingConnection(), {
          kind: 'projection',
          projectionId,
          after: text === undefined ? undefined : { field: 'Last-Event-ID', text },
        })
        .then(
          () => 'admitted',
          (e: DomainError) => `${e.code}${e.details.field ? ` ${String(e.details.field)}` : ''}`,
        );
    limiter = new StreamLimiter({ perKey: 100, perInstance: 100 });
    hub = new StreamHub(source, new EmptyEventSource(), limiter, NO_TENANT_STREAM_QUOTA, OPTIONS);
    expect(await ask('sse', 'unknown', 'x')).toBe('VALIDATION_FAILED Last-Event-ID');
    expect(await ask('sse', null)).toBe('NOT_FOUND');
    expect(await ask('sse', 'audit')).toBe('SSE_DISABLED');
    expect(await ask('websocket', 'audit')).toBe('admitted');
    expect(await ask('sse', PROJECTION, '0')).toBe('admitted');
  });

  it("asks a WebSocket's key and its scope", async () => {
    await expect(hub.authenticate('wrong', 'projection')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(hub.authenticate('key-a', 'events')).resolves.toEqual(OWNER);
    source.authenticate = async () => ({ tenantId: TENANT, keyHash: 'h', scopes: ['events:read'] });
    await expect(hub.authenticate('key-a', 'projection')).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it("wakes a tenant's event streams, not another's, and tells a stream its key was revoked", async () => {
    const events = new EmptyEventSource();
    hub = new StreamHub(source, events, limiter, NO_TENANT_STREAM_QUOTA, OPTIONS);
    const stream = await hub.admit(OWNER, 'sse', new PendingConnection(), { kind: 'events', filters: {} });
    const transport = new Recording<StoredEvent>();
    hub.open(stream as never, transport);
    expect(hub.streamedTenants()).toEqual([TENANT]);
    await until(() => events.reads === 1, 'the catch-up read');
    hub.wakeEventStreams(TENANT);
    await until(() => events.reads === 2, 'the read the wake asked for');
    hub.wakeEventStreams('another-tenant');
    revoke?.();
    expect(transport.revoked).toBe(1);
    expect(events.reads).toBe(2);
  });
});
