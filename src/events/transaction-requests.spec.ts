import { DomainError } from '../common/domain-error';
import { TransactionEventInput, transactionRequests } from './transaction-requests';

const ev = (aggregateId: string, eventType: string, extra: Partial<TransactionEventInput> = {}): TransactionEventInput => ({
  aggregateId,
  event: { eventType, data: '{}' },
  ...extra,
});

function fieldOf(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    expect((e as DomainError).code).toBe('VALIDATION_FAILED');
    return (e as DomainError).details.field;
  }
  throw new Error('accepted');
}

describe('transactionRequests', () => {
  it("groups events per aggregate, aggregates in order of first appearance, each aggregate's events in order", () => {
    const condition = { failIfEventsMatch: { items: [{ tags: ['x'] }] }, after: 4 };
    const rs = transactionRequests('t', {
      events: [ev('b-1', 'B1'), ev('a-1', 'A1', { aggregateType: 'acct' }), ev('b-1', 'B2'), ev('a-1', 'A2')],
      expectedVersions: { 'a-1': 3 },
      condition,
      correlationId: 'c',
    });
    expect(rs.map((r) => [r.aggregateId, r.events.map((e) => e.eventType), r.expectedVersion, r.aggregateType])).toEqual([
      ['b-1', ['B1', 'B2'], undefined, undefined],
      ['a-1', ['A1', 'A2'], 3, 'acct'],
    ]);
    expect(rs[0].condition).toBe(condition);
    expect(rs[1].condition).toBeUndefined();
    expect(rs.map((r) => r.transaction)).toEqual([rs[0].transaction, rs[0].transaction]);
    expect(rs[0].transaction).toEqual({ id: expect.any(String), size: 2 });
    expect(rs.map((r) => [r.correlationId, r.inferredType])).toEqual([
      ['c', 'b'],
      ['c', 'a'],
    ]);
  });

  it('refuses what one request per aggregate cannot hold, and expectedVersions of other aggregates', () => {
    expect(fieldOf(() => transactionRequests('t', { events: [] }))).toBe('events');
    const many = Array.from({ length: 101 }, (_, i) => ev(`a-${i}`, 'E'));
    expect(fieldOf(() => transactionRequests('t', { events: many }))).toBe('events[100].aggregateId');
    expect(transactionRequests('t', { events: many.slice(0, 100) })).toHaveLength(100);
    expect(fieldOf(() => transactionRequests('t', { events: [ev('a', 'E', { metadata: '{"m":1}' }), ev('a', 'F')] }))).toBe(
      'events[1].metadata',
    );
    expect(
      fieldOf(() => transactionRequests('t', { events: [ev('a', 'E', { aggregateType: 'x' }), ev('a', 'F', { aggregateType: 'y' })] })),
    ).toBe('events[1].aggregateType');
    expect(fieldOf(() => transactionRequests('t', { events: [ev('a', 'E')], expectedVersions: { b: 0 } }))).toBe('expectedVersions.b');
    expect(fieldOf(() => transactionRequests('t', { events: [ev('a', 'E')], expectedVersions: { a: -1 } }))).toBe('expectedVersions.a');
  });
});
