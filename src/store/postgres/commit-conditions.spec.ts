import { AppendRequest } from '../event-log.port';
import { conditionsOf } from '../event-query-sql';
import { mayMeetOwnBatch } from './commit-conditions';

const append = (tenantId: string, tags: string[], over: Partial<AppendRequest> = {}): AppendRequest => ({
  tenantId,
  aggregateId: `a-${tags.join('-')}`,
  inferredType: 'a',
  events: [{ eventType: 'Booked', data: '{}', tags }],
  ...over,
});
const on = (tags: string[], after = 0) => ({ condition: { failIfEventsMatch: { items: [{ tags }] }, after } });

describe('which batches a condition sends to the locked path (mayMeetOwnBatch)', () => {
  it('is a batch where an earlier request of the same tenant has an event the condition matches', () => {
    expect(mayMeetOwnBatch([append('t', ['course:1']), append('t', ['course:1'], on(['course:1']))])).toBe(true);
  });

  it('is not one where the match is later, in another tenant, not matching, or the condition’s own transaction', () => {
    expect(mayMeetOwnBatch([append('t', ['course:1'], on(['course:1'])), append('t', ['course:1'])])).toBe(false);
    expect(mayMeetOwnBatch([append('u', ['course:1']), append('t', ['course:1'], on(['course:1']))])).toBe(false);
    expect(mayMeetOwnBatch([append('t', ['course:2']), append('t', ['course:1'], on(['course:1']))])).toBe(false);
    const tx = (i: number) => ({ transaction: { id: 'x', size: 2 }, ...(i === 0 ? on(['course:1']) : {}) });
    expect(mayMeetOwnBatch([append('t', ['course:1'], tx(0)), append('t', ['course:1'], tx(1))])).toBe(false);
    expect(mayMeetOwnBatch([append('t', ['course:1']), append('t', ['course:1'])])).toBe(false);
  });
});

describe('the conditions a statement decides (conditionsOf)', () => {
  it('lists conditions by request index; with outcomes, only the accepted requests’', () => {
    const batch = [append('t', ['a'], on(['a'], 4)), append('t', ['b']), append('t', ['c'], on(['c']))];
    expect(conditionsOf(batch).map((c) => [c.index, c.after])).toEqual([
      [0, 4],
      [2, 0],
    ]);
    const outcomes = [{ ok: false }, { ok: true }, { ok: true }] as never;
    expect(conditionsOf(batch, outcomes).map((c) => c.index)).toEqual([2]);
  });
});
