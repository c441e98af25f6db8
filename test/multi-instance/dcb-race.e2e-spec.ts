import { Api, COURSE_CAPACITY, MAX_ATTEMPTS, readAll, subscribe } from '../support/dcb-clients';
import { Cluster, range } from '../support/multi-instance';
import { Client, clientFor, newTenant } from '../support/service-harness';
import { envFor, stopBackends } from '../support/store-backends';
import { ThrowawayRedis } from '../support/throwaway-redis';

/**
 * Issue 28, "done when": append conditions decided in the append's commit hold across instances.
 * Three instances on one PostgreSQL (and one Redis), the course example of docs/dcb.md
 * (test/support/dcb-clients.ts): 50 writers spread over the instances race for the last seats of a
 * 30-seat course — exactly 30 subscriptions, every loser refused by its condition at least once
 * before it saw the course full; and writers on unrelated courses, in parallel on all instances,
 * never get a 409.
 */
jest.setTimeout(180_000);
let redis: ThrowawayRedis | undefined;
afterAll(async () => {
  await redis?.stop();
  await stopBackends();
}, 60_000);

describe('append conditions, three instances on one PostgreSQL', () => {
  let cluster: Cluster;
  let via: Client[];
  const api =
    (i: number): Api =>
    (p, body) =>
      via[i % via.length].post(p, body);

  beforeAll(async () => {
    redis = await ThrowawayRedis.start();
    cluster = await Cluster.start(3, {
      ...(await envFor('postgres')),
      REDIS_URL: redis.url,
      LOG_LEVEL: 'warn',
      RUNTIME_COMPILER_HOSTS: '1',
      QUOTA_APPEND_REQUESTS: '0',
      QUOTA_APPEND_EVENTS: '0',
    });
    const t = await newTenant(cluster.urls()[0], 'dcb-race');
    via = cluster.urls().map((u) => clientFor(u, t.key, t.tenantId));
  }, 180_000);
  afterAll(() => cluster?.stop());

  it('50 writers on 3 instances racing for the last 10 seats of a 30-seat course: exactly 30, every loser 409 first', async () => {
    // 20 seats taken, one at a time.
    for (const s of range(1, 20)) expect((await subscribe(api(s), 'c0', `early-${s}`)).outcome).toBe('subscribed');

    // 50 writers, all reading before any appends (so each of them appends at least once), spread over the instances.
    const items = (s: string) => [
      { types: ['StudentSubscribedToCourse'], tags: ['course:c0'] },
      { types: ['StudentSubscribedToCourse'], tags: [`student:${s}`] },
    ];
    const writers = range(1, 50).map((w) => `late-${w}`);
    const firstReads = await Promise.all(writers.map((s, w) => readAll(api(w), items(s))));
    for (const r of firstReads) expect(r.events).toHaveLength(20);
    const results = await Promise.all(
      writers.map(async (s, w) => {
        const first = await api(w)('/events', {
          aggregateId: `subscription-c0-${s}`,
          eventType: 'StudentSubscribedToCourse',
          data: { courseId: 'c0', studentId: s },
          tags: ['course:c0', `student:${s}`],
          condition: { failIfEventsMatch: { items: items(s) }, after: firstReads[w].position },
        });
        if (first.status === 201) return { s, outcome: 'subscribed', firstStatus: 201, conflicts: 0, appends: 1 };
        expect(first.status).toBe(409);
        expect(first.body).toMatchObject({ error: 'APPEND_CONDITION_FAILED', after: firstReads[w].position });
        expect(first.body.position).toBeGreaterThan(firstReads[w].position);
        // Then as the doc's client: re-read, decide, retry (through the next instance).
        const rest = await subscribe(api(w + 1), 'c0', s);
        return { s, firstStatus: 409, ...rest, conflicts: rest.conflicts + 1, appends: rest.appends + 1 };
      }),
    );

    const winners = results.filter((r) => r.outcome === 'subscribed');
    const losers = results.filter((r) => r.outcome !== 'subscribed');
    expect(winners).toHaveLength(COURSE_CAPACITY - 20);
    // Every loser was refused with 409 (never stored) and then saw the course full.
    for (const l of losers) {
      expect(l.outcome).toBe('course-full');
      expect(l.conflicts).toBeGreaterThanOrEqual(1);
      expect(l.firstStatus).toBe(409);
    }
    for (const r of results) expect(r.appends).toBeLessThanOrEqual(MAX_ATTEMPTS);

    // Stored, seen alike through every instance: exactly 30, each student once.
    for (let i = 0; i < 3; i++) {
      const { events } = await readAll(api(i), [{ types: ['StudentSubscribedToCourse'], tags: ['course:c0'] }]);
      expect(events).toHaveLength(COURSE_CAPACITY);
      expect(new Set(events.map((e) => e.data.studentId)).size).toBe(COURSE_CAPACITY);
      expect(
        events
          .filter((e) => e.data.studentId.startsWith('late-'))
          .map((e) => e.data.studentId)
          .sort(),
      ).toEqual(winners.map((w) => w.s).sort());
    }
  });

  it('writers on unrelated courses (course:1..10), in parallel on all instances, never get a 409', async () => {
    const COURSES = 10;
    const PER_COURSE = 25; // within the capacity of 30
    const results = await Promise.all(
      range(1, COURSES).map(async (c) => {
        const outcomes = [];
        // One writer per course: its appends follow each other; the writers of the other courses run beside it.
        for (const s of range(1, PER_COURSE)) outcomes.push(await subscribe(api(c + s), `${c}`, `c${c}-s${s}`));
        return outcomes;
      }),
    );
    const all = results.flat();
    expect(all.every((r) => r.outcome === 'subscribed')).toBe(true);
    // Not one false conflict: each append's condition was about its own course and student only.
    expect(all.reduce((n, r) => n + r.conflicts, 0)).toBe(0);
    for (const c of range(1, COURSES)) {
      const { events } = await readAll(api(c), [{ tags: [`course:${c}`] }]);
      expect(events).toHaveLength(PER_COURSE);
    }
  });
});
