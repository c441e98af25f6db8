import { AppendRequest, StoredEvent } from './event-log.port';
import { idempotencyKeyOf, matchesQuery, planAppends, RememberedKey, streamKey } from './append-plan';

const req = (over: Partial<AppendRequest>): AppendRequest => ({
  tenantId: 't1',
  aggregateId: 'order-1',
  inferredType: 'order',
  events: [{ eventType: 'E', data: '{}' }],
  ...over,
});
const tagged = (aggregateId: string, tags: string[], over: Partial<AppendRequest> = {}) =>
  req({ aggregateId, events: [{ eventType: 'E', data: '{}', tags }], ...over });
const member = (id: string, size: number, aggregateId: string, over: Partial<AppendRequest> = {}) =>
  req({
    aggregateId,
    transaction: { id, size },
    events: [
      { eventType: 'E', data: '{}' },
      { eventType: 'F', data: '{}' },
    ],
    ...over,
  });
const heads = (p = 10) => new Map([['t1', p]]);
const codes = (plan: ReturnType<typeof planAppends>) => plan.outcomes.map((o) => (o.ok ? 'ok' : o.error.code));

describe('matchesQuery', () => {
  it('matches any item: any of its types, all of its tags; an empty item everything', () => {
    const e = { eventType: 'Joined', tags: ['course:7', 'student:a'] };
    expect(matchesQuery({ items: [{ tags: ['course:7', 'student:a'] }] }, e)).toBe(true);
    expect(matchesQuery({ items: [{ tags: ['course:7', 'student:b'] }] }, e)).toBe(false);
    expect(matchesQuery({ items: [{ types: ['Left', 'Joined'], tags: ['course:7'] }] }, e)).toBe(true);
    expect(matchesQuery({ items: [{ types: ['Left'] }, { tags: ['student:a'] }] }, e)).toBe(true);
    expect(matchesQuery({ items: [{ types: ['Left'] }] }, e)).toBe(false);
    expect(matchesQuery({ items: [{}] }, { eventType: 'X' })).toBe(true);
    expect(matchesQuery({ items: [{ tags: ['a'] }] }, { eventType: 'X' })).toBe(false);
  });
});

describe('planAppends with conditions', () => {
  it('fails on the store’s hit (by request index), with the real position and `after`; others go on', () => {
    const condition = { failIfEventsMatch: { items: [{ tags: ['c'] }] }, after: 4 };
    const plan = planAppends(
      [req({}), tagged('x-1', ['c'], { condition }), req({ aggregateId: 'order-2' })],
      new Map(),
      heads(),
      1,
      new Map(),
      new Map([[1, 7]]),
    );
    expect(codes(plan)).toEqual(['ok', 'APPEND_CONDITION_FAILED', 'ok']);
    const failed = plan.outcomes[1];
    expect(!failed.ok && failed.error.details).toEqual({ position: 7, after: 4 });
    expect(plan.rows.map((r) => r.position)).toEqual([11, 12]);
  });

  it('fails on an event accepted earlier in the plan after `after`, not on one at or before it, nor on a refused one', () => {
    const c = (after?: number) => ({ failIfEventsMatch: { items: [{ tags: ['c'] }] }, ...(after !== undefined ? { after } : {}) });
    const plan = planAppends(
      [
        tagged('x-1', ['c'], { expectedVersion: 3 }), // refused: its event counts for nothing
        tagged('x-2', ['c'], { condition: c() }),
        tagged('x-3', ['c'], { condition: c(11) }),
        tagged('x-4', ['c'], { condition: c(12) }),
        tagged('x-5', ['d'], { condition: c(12) }),
      ],
      new Map(),
      heads(),
      1,
    );
    // x-2 at 11, x-3 (after 11) at 12, x-4 (after 12) at 13: x-5 (after 12) meets x-4's event.
    expect(codes(plan)).toEqual(['VERSION_CONFLICT', 'ok', 'ok', 'ok', 'APPEND_CONDITION_FAILED']);
    expect(!plan.outcomes[4].ok && plan.outcomes[4].error.details).toEqual({ position: 13, after: 12 });
  });
});

describe('planAppends with transactions', () => {
  it('stores a transaction’s members contiguously, in order, each aggregate its versions', () => {
    const plan = planAppends(
      [req({ aggregateId: 'a-0' }), member('tx', 2, 'a-1'), member('tx', 2, 'b-1', { expectedVersion: 2 }), req({ aggregateId: 'a-9' })],
      new Map([[streamKey('t1', 'b-1'), { aggregateType: 'b', version: 2 }]]),
      heads(),
      1,
    );
    expect(codes(plan)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(plan.rows.map((r) => [r.aggregateId, r.version, r.position])).toEqual([
      ['a-0', 1, 11],
      ['a-1', 1, 12],
      ['a-1', 2, 13],
      ['b-1', 3, 14],
      ['b-1', 4, 15],
      ['a-9', 1, 16],
    ]);
  });

  it('stores none of a transaction when its third member fails: every member answers that failure, naming the aggregate', () => {
    const snapshot = { bindingId: 'b', baseVersion: 0, state: '{}' };
    const idempotency = { key: 'k', requestHash: 'h', notBefore: 0 };
    const plan = planAppends(
      [
        member('tx', 3, 'a-1', { snapshot, idempotency }),
        member('tx', 3, 'b-1', { snapshot }),
        member('tx', 3, 'c-1', { expectedVersion: 4 }),
        req({ aggregateId: 'd-1' }),
      ],
      new Map(),
      heads(),
      1,
    );
    expect(codes(plan)).toEqual(['VERSION_CONFLICT', 'VERSION_CONFLICT', 'VERSION_CONFLICT', 'ok']);
    expect(!plan.outcomes[0].ok && plan.outcomes[0].error.details).toEqual({ expectedVersion: 4, actualVersion: 0, aggregateId: 'c-1' });
    expect(plan.rows.map((r) => [r.aggregateId, r.position])).toEqual([['d-1', 11]]);
    expect(plan.streams.map((s) => s.aggregateId)).toEqual(['d-1']);
    expect(plan.snapshots).toEqual([]);
    expect(plan.keys).toEqual([]);
    expect(plan.heads).toEqual(new Map([['t1', 11]]));
  });

  it('answers a member’s refusal or stale state for all, after every member’s versions and the condition', () => {
    const refusal = { code: 'REDUCER_REJECTED' as const, message: 'no', details: {} };
    const condition = { failIfEventsMatch: { items: [{ types: ['E'] }] } };
    const [a, b] = [member('t', 2, 'a-1', { refusal }), member('t', 2, 'b-1', { expectedVersion: 1 })];
    expect(codes(planAppends([a, b], new Map(), heads(), 1))).toEqual(['VERSION_CONFLICT', 'VERSION_CONFLICT']);
    const refused = planAppends([a, { ...b, expectedVersion: 0 }], new Map(), heads(), 1);
    expect(!refused.outcomes[1].ok && refused.outcomes[1].error.details).toEqual({ aggregateId: 'a-1' });
    const conditioned = planAppends(
      [
        { ...a, condition },
        { ...b, expectedVersion: 0 },
      ],
      new Map(),
      heads(),
      1,
      new Map(),
      new Map([[0, 3]]),
    );
    expect(codes(conditioned)).toEqual(['APPEND_CONDITION_FAILED', 'APPEND_CONDITION_FAILED']);
    expect(!conditioned.outcomes[1].ok && conditioned.outcomes[1].error.details).toEqual({ position: 3 });
  });

  it('checks its condition once, before its own events (which never count), against the plan’s earlier events', () => {
    const condition = { failIfEventsMatch: { items: [{ tags: ['c'] }] }, after: 10 };
    const own = [
      member('tx', 2, 'a-1', { condition, events: [{ eventType: 'E', data: '{}', tags: ['c'] }] }),
      member('tx', 2, 'b-1', { events: [{ eventType: 'E', data: '{}', tags: ['c'] }] }),
    ];
    expect(codes(planAppends(own, new Map(), heads(), 1))).toEqual(['ok', 'ok']);
    const after = planAppends([tagged('z-1', ['c']), ...own], new Map(), heads(), 1);
    expect(codes(after)).toEqual(['ok', 'APPEND_CONDITION_FAILED', 'APPEND_CONDITION_FAILED']);
  });

  it('remembers a keyed transaction’s key over all its events, and replays it per member, in the plan and from the store', () => {
    const idempotency = { key: 'k', requestHash: 'h', notBefore: 0 };
    const tx = (id: string) => [member(id, 2, 'a-1', { idempotency }), member(id, 2, 'b-1')];
    const plan = planAppends([...tx('one'), ...tx('two')], new Map(), heads(), 1);
    expect(codes(plan)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(plan.rows).toHaveLength(4);
    expect(plan.keys).toEqual([
      { tenantId: 't1', key: 'k', requestHash: 'h', firstPosition: 11, lastPosition: 14, outcome: null, createdAt: 1 },
    ]);
    const [, , a, b] = plan.outcomes;
    expect(a.ok && a.result).toMatchObject({ aggregateId: 'a-1', aggregateType: 'order', replay: { outcome: null } });
    expect(a.ok && a.result.events.map((e) => e.position)).toEqual([11, 12]);
    expect(b.ok && b.result.events.map((e) => e.position)).toEqual([13, 14]);

    const events = plan.rows.map(({ tenantId: _t, ...e }) => e as StoredEvent);
    const remembered = new Map<string, RememberedKey>([[idempotencyKeyOf('t1', 'k'), { requestHash: 'h', outcome: '{"s":1}', events }]]);
    const replay = planAppends(tx('three'), new Map(), heads(14), 2, remembered);
    expect(replay.rows).toEqual([]);
    expect(replay.outcomes.map((o) => o.ok && [o.result.aggregateId, o.result.events.map((e) => e.version), o.result.replay])).toEqual([
      ['a-1', [1, 2], { outcome: '{"s":1}' }],
      ['b-1', [1, 2], { outcome: '{"s":1}' }],
    ]);
    const reused = planAppends(
      [member('x', 2, 'a-1', { idempotency: { ...idempotency, requestHash: 'other' } }), member('x', 2, 'b-1')],
      new Map(),
      heads(14),
      2,
      remembered,
    );
    expect(codes(reused)).toEqual(['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_REUSED']);
  });

  it('answers a transaction split or interleaved in a group commit INTERNAL, storing none of it', () => {
    const plan = planAppends(
      [member('tx', 3, 'a-1'), member('tx', 3, 'b-1'), req({ aggregateId: 'c-1' }), member('tx', 3, 'd-1')],
      new Map(),
      heads(),
      1,
    );
    expect(codes(plan)).toEqual(['INTERNAL', 'INTERNAL', 'ok', 'INTERNAL']);
    expect(plan.rows.map((r) => r.aggregateId)).toEqual(['c-1']);
  });
});
