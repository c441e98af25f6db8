import { DomainError, versionConflict } from '../common/domain-error';
import { AppendOutcome, AppendRequest, EventLog } from '../store/event-log.port';
import { AppMetrics } from '../observability/metrics/app-metrics';
import { AppendBatcher } from './append-batcher';
import { elapse } from '../../test/support/wait';

const req = (id: string, n = 1): AppendRequest => ({
  tenantId: 't',
  aggregateId: id,
  inferredType: 'x',
  events: Array.from({ length: n }, () => ({ eventType: 'E', data: '{}' })),
});

/** A fake log that records the batches it was given; the batcher's grouping is what is tested. */
class RecordingLog implements Pick<EventLog, 'appendMany'> {
  batches: string[][] = [];
  failWhen?: (reqs: AppendRequest[]) => boolean;
  async appendMany(reqs: AppendRequest[]): Promise<AppendOutcome[]> {
    this.batches.push(reqs.map((r) => r.aggregateId));
    await elapse(5, 'a store round trip: appends arriving meanwhile wait for the next batch');
    if (this.failWhen?.(reqs)) throw new Error('transaction failed');
    return reqs.map((r) =>
      r.aggregateId.startsWith('conflict')
        ? { ok: false, error: versionConflict(0, 1) }
        : { ok: true, result: { aggregateId: r.aggregateId, aggregateType: 'x', events: [] } },
    );
  }
}

describe('AppendBatcher', () => {
  it('gathers appends that arrive during a commit into the next one', async () => {
    const log = new RecordingLog();
    const b = new AppendBatcher(log);
    const first = b.append(req('a'));
    await new Promise((r) => setImmediate(r));
    const rest = ['b', 'c', 'd'].map((id) => b.append(req(id)));
    await Promise.all([first, ...rest]);
    expect(log.batches).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('answers each append on its own', async () => {
    const b = new AppendBatcher(new RecordingLog());
    const results = await Promise.allSettled([b.append(req('ok-1')), b.append(req('conflict-1')), b.append(req('ok-2'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(((results[1] as PromiseRejectedResult).reason as DomainError).code).toBe('VERSION_CONFLICT');
  });

  it('tells the metrics each commit: its size, and the requests and events it stored', async () => {
    const commits: number[][] = [];
    const metrics = new (class extends AppMetrics {
      override get enabled(): boolean {
        return true;
      }
      override groupCommitted(batchSize: number, stored: number, events: number): void {
        commits.push([batchSize, stored, events]);
      }
    })();
    const b = new AppendBatcher(new RecordingLog(), {}, metrics);
    await Promise.allSettled([b.append(req('ok-1', 3)), b.append(req('conflict-1', 2)), b.append(req('ok-2'))]);
    expect(commits).toEqual([[3, 2, 4]]);
  });

  it('retries one by one when a whole transaction fails, so one bad append fails alone', async () => {
    const log = new RecordingLog();
    log.failWhen = (reqs) => reqs.some((r) => r.aggregateId === 'poison');
    const b = new AppendBatcher(log);
    const results = await Promise.allSettled([b.append(req('a')), b.append(req('poison')), b.append(req('c'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('caps a commit by event count', async () => {
    const log = new RecordingLog();
    const b = new AppendBatcher(log, { maxEventsPerCommit: 10 });
    await Promise.all([b.append(req('a', 6)), b.append(req('b', 6)), b.append(req('c', 20))]);
    expect(log.batches).toEqual([['a'], ['b'], ['c']]);
  });

  it('runs concurrent commits on disjoint aggregates, keeping each aggregate in order', async () => {
    const log = new RecordingLog();
    const b = new AppendBatcher(log, { maxConcurrentCommits: 2 });
    const first = b.append(req('x'));
    await new Promise((r) => setImmediate(r));
    const rest = [req('x'), req('y'), req('x'), req('z')].map((r) => b.append(r));
    await Promise.all([first, ...rest]);
    // While x is in flight the second commit takes only y and z; the two later x appends follow together.
    expect(log.batches).toEqual([['x'], ['y', 'z'], ['x', 'x']]);
  });

  it('finishes accepted appends on close and refuses new ones', async () => {
    const b = new AppendBatcher(new RecordingLog());
    const inflight = b.append(req('a'));
    const closing = b.close();
    await expect(b.append(req('late'))).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await expect(inflight).resolves.toMatchObject({ aggregateId: 'a' });
    await closing;
  });

  it('never puts two requests with one idempotency key into concurrent transactions; one group commit may hold both', async () => {
    const log = new RecordingLog();
    const b = new AppendBatcher(log, { maxConcurrentCommits: 2 });
    const keyed = (id: string, key: string): AppendRequest => ({ ...req(id), idempotency: { key, requestHash: 'h', notBefore: 0 } });
    const first = b.append(keyed('k-a', 'same'));
    await new Promise((r) => setImmediate(r));
    // 'k-b' shares the key with the commit in flight: it waits, though its aggregate is free; 'k-c' has its own key.
    const rest = [b.append(keyed('k-b', 'same')), b.append(keyed('k-c', 'other')), b.append(keyed('k-d', 'same'))];
    await Promise.all([first, ...rest]);
    expect(log.batches).toEqual([['k-a'], ['k-c'], ['k-b', 'k-d']]);
  });

  describe('tenants in turn (issue 25 item 5)', () => {
    const of = (tenantId: string, id: string, n = 1): AppendRequest => ({ ...req(id, n), tenantId });

    it("takes one append from each waiting tenant per round, so another tenant's append is not behind a flood", async () => {
      const log = new RecordingLog();
      const b = new AppendBatcher(log, { maxEventsPerCommit: 250 });
      const first = b.append(of('A', 'a0', 100));
      await new Promise((r) => setImmediate(r));
      // A queues five 100-event batches, then B one single append: B goes in the next commit.
      const flood = [1, 2, 3, 4, 5].map((i) => b.append(of('A', `a${i}`, 100)));
      const single = b.append(of('B', 'b1'));
      await Promise.all([first, ...flood, single]);
      expect(log.batches).toEqual([['a0'], ['a1', 'b1', 'a2'], ['a3', 'a4'], ['a5']]);
    });

    it('orders tenants by their oldest waiting append, so a tenant left out of a full commit goes first in the next', async () => {
      const log = new RecordingLog();
      const b = new AppendBatcher(log, { maxEventsPerCommit: 100 });
      const first = b.append(of('X', 'x0'));
      await new Promise((r) => setImmediate(r));
      const rest = [b.append(of('A', 'a1', 100)), b.append(of('B', 'b1', 100)), b.append(of('C', 'c1', 1)), b.append(of('A', 'a2', 1))];
      await Promise.all([first, ...rest]);
      // A's batch fills a commit; B (older than C) goes next; C and A's second after: never two of A's before B's one.
      expect(log.batches).toEqual([['x0'], ['a1'], ['b1'], ['c1', 'a2']]);
    });

    it("keeps each tenant's appends in arrival order and holds an aggregate left behind", async () => {
      const log = new RecordingLog();
      const b = new AppendBatcher(log, { maxConcurrentCommits: 2 });
      const first = b.append(of('A', 'x'));
      await new Promise((r) => setImmediate(r));
      const rest = [of('A', 'x'), of('A', 'y'), of('B', 'x'), of('A', 'x'), of('B', 'z')].map((r) => b.append(r));
      await Promise.all([first, ...rest]);
      // A's x is in flight: A's later x appends wait together; B's aggregate x is another stream.
      expect(log.batches).toEqual([['x'], ['y', 'x', 'z'], ['x', 'x']]);
    });
  });

  describe('transactions (POST /events/transaction)', () => {
    const member = (id: string, n = 1): AppendRequest => ({ ...req(id, n), transaction: { id: 'tx', size: 3 } });

    it('takes a transaction whole into one commit, never split, even past the event cap', async () => {
      const log = new RecordingLog();
      const b = new AppendBatcher(log, { maxEventsPerCommit: 10 });
      const first = b.append(req('a'));
      await new Promise((r) => setImmediate(r));
      const before = b.append(req('b', 5));
      const tx = b.appendTransaction([member('t1', 4), member('t2', 4), member('t3', 4)]);
      const after = b.append(req('c'));
      const results = await Promise.all([first, before, tx, after]);
      expect(results[2].map((r) => r.aggregateId)).toEqual(['t1', 't2', 't3']);
      // b fills part of a commit; the 12-event transaction does not fit beside it, goes alone, and c follows.
      expect(log.batches).toEqual([['a'], ['b'], ['t1', 't2', 't3'], ['c']]);
    });

    it('waits while any of its aggregates is in flight, and holds later appends of its aggregates behind it', async () => {
      const log = new RecordingLog();
      const b = new AppendBatcher(log, { maxConcurrentCommits: 2 });
      const first = b.append(req('t2'));
      await new Promise((r) => setImmediate(r));
      const rest = [b.appendTransaction([member('t1'), member('t2')]), b.append(req('t1')), b.append(req('z'))];
      await Promise.all([first, ...rest]);
      expect(log.batches).toEqual([['t2'], ['z'], ['t1', 't2', 't1']]);
    });

    it("rejects with the failing member's error, naming its aggregate", async () => {
      const b = new AppendBatcher(new RecordingLog());
      const tx = b.appendTransaction([member('ok-1'), member('conflict-2')]);
      await expect(tx).rejects.toMatchObject({ code: 'VERSION_CONFLICT', details: { aggregateId: 'conflict-2' } });
    });

    it('is retried whole when its commit fails, apart from its neighbours', async () => {
      const log = new RecordingLog();
      log.failWhen = (reqs) => reqs.some((r) => r.aggregateId === 'poison');
      const b = new AppendBatcher(log);
      const results = await Promise.allSettled([
        b.append(req('a')),
        b.appendTransaction([member('t1'), member('t2')]),
        b.append(req('poison')),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
      expect(log.batches.slice(1)).toEqual([['a'], ['t1', 't2'], ['poison']]);
    });
  });
});
