import { DomainError } from '../common/domain-error';
import { AppendRequest } from './event-log.port';
import { decideAggregateType, idempotencyKeyOf, planAppends, streamKey, tenantsOf } from './append-plan';

const req = (over: Partial<AppendRequest>): AppendRequest => ({
  tenantId: 't1',
  aggregateId: 'order-1',
  inferredType: 'order',
  events: [{ eventType: 'E', data: '{}' }],
  ...over,
});

describe('planAppends', () => {
  it('numbers versions per aggregate and positions per tenant, in arrival order', () => {
    const plan = planAppends(
      [
        req({}),
        req({ tenantId: 't2' }),
        req({
          events: [
            { eventType: 'A', data: '{}' },
            { eventType: 'B', data: '{}' },
          ],
        }),
      ],
      new Map([[streamKey('t1', 'order-1'), { aggregateType: 'order', version: 3 }]]),
      new Map([
        ['t1', 10],
        ['t2', 0],
      ]),
      1000,
    );
    expect(plan.rows.map((r) => [r.tenantId, r.version, r.position])).toEqual([
      ['t1', 4, 11],
      ['t2', 1, 1],
      ['t1', 5, 12],
      ['t1', 6, 13],
    ]);
    expect(plan.heads).toEqual(
      new Map([
        ['t1', 13],
        ['t2', 1],
      ]),
    );
    expect(plan.streams.find((s) => s.tenantId === 't1')?.version).toBe(6);
  });

  it('refuses every append to an erased aggregate, and to the service’s own $ types, without affecting the others', () => {
    const plan = planAppends(
      [
        req({}),
        req({ aggregateId: 'order-2' }),
        req({ expectedVersion: 2 }),
        req({ aggregateId: '$erasures', inferredType: '_erasures' }),
        req({ aggregateId: '$mine', inferredType: '_mine' }),
      ],
      new Map([
        [streamKey('t1', 'order-1'), { aggregateType: 'order', version: 2, erasedAt: 500 }],
        [streamKey('t1', '$erasures'), { aggregateType: '$system', version: 1 }],
      ]),
      new Map([['t1', 7]]),
      1000,
    );
    expect(plan.outcomes.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual([
      'AGGREGATE_ERASED',
      'ok',
      'AGGREGATE_ERASED',
      'RESERVED_NAME',
      'RESERVED_NAME',
    ]);
    expect(!plan.outcomes[4].ok && plan.outcomes[4].error.details).toEqual({ field: 'aggregateId' });
    expect(!plan.outcomes[0].ok && plan.outcomes[0].error.details).toEqual({
      aggregateId: 'order-1',
      erasedAt: new Date(500).toISOString(),
    });
    expect(plan.rows.map((r) => [r.aggregateId, r.position])).toEqual([['order-2', 8]]);
    expect(plan.streams.map((s) => s.aggregateId)).toEqual(['order-2']);
  });

  it('rejects a request whose expectedVersion is stale without affecting the others', () => {
    const plan = planAppends(
      [req({ expectedVersion: 0 }), req({ expectedVersion: 0 }), req({ expectedVersion: 1 })],
      new Map(),
      new Map([['t1', 0]]),
      1000,
    );
    expect(plan.outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    const failed = plan.outcomes[1];
    expect(!failed.ok && failed.error.details).toEqual({ expectedVersion: 0, actualVersion: 1 });
    expect(plan.rows.map((r) => r.version)).toEqual([1, 2]);
    expect(plan.rows.map((r) => r.position)).toEqual([1, 2]);
  });

  it('fixes the aggregate type by the first event and refuses a different explicit one', () => {
    const plan = planAppends(
      [req({ aggregateType: 'purchase' }), req({}), req({ aggregateType: 'order' })],
      new Map(),
      new Map([['t1', 0]]),
      1000,
    );
    expect(plan.outcomes[0].ok && plan.outcomes[0].result.aggregateType).toBe('purchase');
    expect(plan.outcomes[1].ok && plan.outcomes[1].result.aggregateType).toBe('purchase');
    const third = plan.outcomes[2];
    expect(!third.ok && third.error.code).toBe('AGGREGATE_TYPE_MISMATCH');
  });

  it('leaves heads untouched when nothing of a tenant is accepted', () => {
    const plan = planAppends([req({ expectedVersion: 5 })], new Map(), new Map([['t1', 7]]), 1000);
    expect(plan.rows).toHaveLength(0);
    expect(plan.heads.size).toBe(0);
  });

  it('lists tenants sorted so locks are taken in one order', () => {
    expect(tenantsOf([req({ tenantId: 'b' }), req({ tenantId: 'a' }), req({ tenantId: 'b' })])).toEqual(['a', 'b']);
  });
});

describe('decideAggregateType', () => {
  it('keeps a stream’s stored type; a new stream takes the given type, else the inferred one', () => {
    expect(decideAggregateType({ inferredType: 'order' }, 'invoice')).toBe('invoice');
    expect(decideAggregateType({ aggregateType: 'invoice', inferredType: 'order' }, 'invoice')).toBe('invoice');
    expect(decideAggregateType({ aggregateType: 'invoice', inferredType: 'order' }, undefined)).toBe('invoice');
    expect(decideAggregateType({ inferredType: 'order' }, undefined)).toBe('order');
  });

  it('refuses a given type other than the stored one', () => {
    const d = decideAggregateType({ aggregateType: 'order', inferredType: 'order' }, 'invoice');
    expect(d).toMatchObject({ code: 'AGGREGATE_TYPE_MISMATCH', details: { aggregateType: 'order', actualAggregateType: 'invoice' } });
  });
});

describe('planAppends with idempotency keys', () => {
  const keyed = (key: string, hash: string, over: Partial<AppendRequest> = {}) =>
    req({ idempotency: { key, requestHash: hash, notBefore: 0 }, ...over });
  const stored = {
    position: 4,
    eventId: 'e-4',
    aggregateId: 'order-9',
    aggregateType: 'order',
    eventType: 'E',
    version: 1,
    timestamp: 5,
    data: '{}',
    metadata: null,
    correlationId: null,
    causationId: null,
  };

  it('replays a remembered key before any check of versions, refuses it with another hash, writes new ones', () => {
    const remembered = new Map([[idempotencyKeyOf('t1', 'k'), { requestHash: 'h', outcome: '{"state":"{}"}', events: [stored] }]]);
    const plan = planAppends(
      [keyed('k', 'h', { expectedVersion: 42 }), keyed('k', 'other'), keyed('new', 'h')],
      new Map(),
      new Map([['t1', 10]]),
      1000,
      remembered,
    );
    const [replay, reused, fresh] = plan.outcomes;
    expect(replay).toEqual({
      ok: true,
      result: { aggregateId: 'order-9', aggregateType: 'order', events: [stored], replay: { outcome: '{"state":"{}"}' } },
    });
    expect(!reused.ok && reused.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(fresh.ok && fresh.result.events[0].position).toBe(11);
    expect(plan.keys).toEqual([
      { tenantId: 't1', key: 'new', requestHash: 'h', firstPosition: 11, lastPosition: 11, outcome: null, createdAt: 1000 },
    ]);
  });

  it('answers a key used twice in one plan with the first answer, and keeps a refused request from taking a key', () => {
    const plan = planAppends(
      [keyed('k', 'h', { expectedVersion: 3 }), keyed('k', 'h'), keyed('k', 'h'), keyed('k', 'h2')],
      new Map(),
      new Map([['t1', 0]]),
      1000,
    );
    expect(plan.outcomes.map((o) => (o.ok ? (o.result.replay ? 'replay' : 'stored') : o.error.code))).toEqual([
      'VERSION_CONFLICT',
      'stored',
      'replay',
      'IDEMPOTENCY_KEY_REUSED',
    ]);
    expect(plan.rows).toHaveLength(1);
    expect(plan.keys).toHaveLength(1);
    const [, first, second] = plan.outcomes;
    expect(second.ok && first.ok && second.result.events).toBe(first.ok && first.result.events);
  });

  it('answers a reducer’s refusal after every other check: a replay, a reused key, a conflict and a stale base outrank it', () => {
    const refusal = { code: 'REDUCER_REJECTED' as const, message: 'insufficient funds', details: { eventIndex: 0 } };
    const remembered = new Map([[idempotencyKeyOf('t1', 'k'), { requestHash: 'h', outcome: '{"state":"{}"}', events: [stored] }]]);
    const snapshot = (baseVersion: number) => ({ bindingId: 'b', baseVersion, state: '{}' });
    const plan = planAppends(
      [
        keyed('k', 'h', { refusal, snapshot: snapshot(2) }),
        keyed('k', 'other', { refusal, snapshot: snapshot(2) }),
        req({ refusal, expectedVersion: 1, snapshot: snapshot(2) }),
        req({ refusal, snapshot: snapshot(1) }),
        keyed('fresh', 'h', { refusal, snapshot: snapshot(2) }),
        req({ snapshot: snapshot(2) }),
      ],
      new Map([[streamKey('t1', 'order-1'), { aggregateType: 'order', version: 2 }]]),
      new Map([['t1', 10]]),
      1000,
      remembered,
    );
    expect(plan.outcomes.map((o) => (o.ok ? (o.result.replay ? 'replay' : 'stored') : o.error.code))).toEqual([
      'replay',
      'IDEMPOTENCY_KEY_REUSED',
      'VERSION_CONFLICT',
      'STATE_STALE',
      'REDUCER_REJECTED',
      'stored',
    ]);
    const refused = plan.outcomes[4];
    expect(!refused.ok && refused.error).toBeInstanceOf(DomainError);
    expect(!refused.ok && [refused.error.code, refused.error.message, refused.error.details]).toEqual([
      'REDUCER_REJECTED',
      'insufficient funds',
      { eventIndex: 0 },
    ]);
    // The refused request stored nothing and took no key: the accepted one after it is version 3, position 11.
    expect(plan.rows.map((r) => [r.version, r.position])).toEqual([[3, 11]]);
    expect(plan.keys).toEqual([]);
    expect(plan.snapshots.map((n) => n.version)).toEqual([3]);
  });

  it('keeps keys per tenant', () => {
    const remembered = new Map([[idempotencyKeyOf('t1', 'k'), { requestHash: 'h', outcome: null, events: [stored] }]]);
    const plan = planAppends([keyed('k', 'h', { tenantId: 't2' })], new Map(), new Map([['t2', 0]]), 1000, remembered);
    expect(plan.outcomes[0].ok && plan.outcomes[0].result.replay).toBeUndefined();
  });
});
