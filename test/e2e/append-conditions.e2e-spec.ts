import { postKeyed } from '../support/keyed-append';
import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';

/**
 * README "Append conditions" (issue 28 item 4, the DCB), over HTTP on both stores: a condition
 * refuses an append (409 APPEND_CONDITION_FAILED, nothing stored) when an event matching its query
 * was stored after the position the client read, and lets it through otherwise; expectedVersion is
 * checked first; 50 parallel writers racing for a course's last seats end with exactly 30
 * subscriptions; writers on unrelated tags never conflict.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const SUBSCRIBED = (course: string) => ({ items: [{ types: ['Subscribed'], tags: [course] }] });

/** Reads the course's subscriptions by query (one page is enough here): how many, and the position read up to. */
async function readCourse(c: Client, course: string): Promise<{ count: number; position: number }> {
  const res = await c.post('/events/query', { ...SUBSCRIBED(course), limit: 1000 });
  expect(res.status).toBe(200);
  return { count: res.body.events.length, position: res.body.nextAfterPosition };
}

describe.each(STORE_BACKENDS)('append conditions on %s', (backend) => {
  let svc: RunningService;
  let a: Client;

  /** A subscription of `student` to `course`, guarded by `condition` (a fresh aggregate each time unless given). */
  const subscribe = (c: Client, course: string, student: string, condition?: unknown, extra: Record<string, unknown> = {}) =>
    postKeyed(
      svc.url,
      c.key,
      '/events',
      JSON.stringify({
        aggregateId: `sub-${course}-${student}`,
        eventType: 'Subscribed',
        data: { student },
        tags: [course, `student:${student}`],
        ...(condition ? { condition } : {}),
        ...extra,
      }),
    );

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    a = await newTenant(svc.url, 'conditions');
  }, 120_000);
  afterAll(() => svc?.close());

  it('refuses an append when a matching event arrived after the read position, and accepts it at the new one', async () => {
    const course = 'course:c1';
    expect((await subscribe(a, course, 's0')).status).toBe(201);
    const read = await readCourse(a, course);
    // Someone else subscribes after our read.
    const other = await subscribe(a, course, 's1');
    expect(other.status).toBe(201);
    // An event of another type or another course does not match.
    expect((await a.post('/events', { aggregateId: 'n-1', eventType: 'Noted', data: {}, tags: [course] })).status).toBe(201);
    expect((await subscribe(a, 'course:other', 's9')).status).toBe(201);
    const refused = await subscribe(a, course, 's2', { failIfEventsMatch: SUBSCRIBED(course), after: read.position });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 'APPEND_CONDITION_FAILED',
      message: expect.any(String),
      position: other.body.position,
      after: read.position,
    });
    expect((await a.get(`/events/sub-${course}-s2`)).body.events).toEqual([]);
    // Read again, decide again: accepted.
    const again = await readCourse(a, course);
    expect(again).toEqual({ count: 2, position: other.body.position });
    const accepted = await subscribe(a, course, 's2', { failIfEventsMatch: SUBSCRIBED(course), after: again.position });
    expect(accepted.status).toBe(201);
    // Without `after`: any matching event at all fails it, naming the first one.
    const never = await subscribe(a, course, 's3', { failIfEventsMatch: SUBSCRIBED(course) });
    expect(never.status).toBe(409);
    expect(never.body).toEqual({ error: 'APPEND_CONDITION_FAILED', message: expect.any(String), position: expect.any(Number) });
    expect(never.body.position).toBeLessThan(other.body.position);
    // The append's own events never count against its condition.
    const fresh = await subscribe(a, 'course:c1-new', 's0', { failIfEventsMatch: SUBSCRIBED('course:c1-new') });
    expect(fresh.status).toBe(201);
  });

  it('checks expectedVersion first (VERSION_CONFLICT), then the condition, on /events and /events/batch', async () => {
    const course = 'course:c2';
    const cond = { failIfEventsMatch: SUBSCRIBED(course), after: 0 };
    expect((await subscribe(a, course, 'x')).status).toBe(201);
    const both = await subscribe(a, course, 'x', cond, { expectedVersion: 5 });
    expect([both.status, both.body.error]).toEqual([409, 'VERSION_CONFLICT']);
    const onlyCondition = await subscribe(a, course, 'x', cond, { expectedVersion: 1 });
    expect([onlyCondition.status, onlyCondition.body.error]).toEqual([409, 'APPEND_CONDITION_FAILED']);
    const batch = (condition: unknown, expectedVersion?: number) =>
      a.post('/events/batch', {
        aggregateId: 'seat-list-c2',
        ...(expectedVersion !== undefined ? { expectedVersion } : {}),
        events: [
          { eventType: 'Subscribed', data: {}, tags: [course] },
          { eventType: 'Noted', data: {} },
        ],
        condition,
      });
    expect((await batch(cond, 3)).body.error).toBe('VERSION_CONFLICT');
    expect((await batch(cond)).body.error).toBe('APPEND_CONDITION_FAILED');
    expect((await a.get('/events/seat-list-c2')).body.events).toEqual([]);
    const head = (await readCourse(a, course)).position;
    const ok = await batch({ failIfEventsMatch: SUBSCRIBED(course), after: head }, 0);
    expect(ok.status).toBe(201);
    expect(ok.body.endVersion).toBe(2);
  });

  it('50 parallel writers racing for the last seat of a 30-seat course: one wins, 49 get 409, 30 subscriptions', async () => {
    const t = await newTenant(svc.url, 'last-seat');
    const course = 'course:last-seat';
    for (let i = 0; i < 29; i++) expect((await subscribe(t, course, `early-${i}`)).status).toBe(201);
    // Every writer reads before any appends (the race at its tightest), then decides and appends.
    const reads = await Promise.all(Array.from({ length: 50 }, () => readCourse(t, course)));
    expect(new Set(reads.map((r) => JSON.stringify(r)))).toEqual(new Set([JSON.stringify({ count: 29, position: reads[0].position })]));
    const answers = await Promise.all(
      reads.map((r, i) => subscribe(t, course, `racer-${i}`, { failIfEventsMatch: SUBSCRIBED(course), after: r.position })),
    );
    const statuses = answers.map((x) => x.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    expect(answers.filter((x) => x.status === 409).every((x) => x.body.error === 'APPEND_CONDITION_FAILED')).toBe(true);
    expect((await readCourse(t, course)).count).toBe(30);
  });

  it('50 parallel writers retrying on 409 fill the last 10 seats exactly: 30 subscriptions, never more', async () => {
    const t = await newTenant(svc.url, 'ten-seats');
    const course = 'course:ten-seats';
    for (let i = 0; i < 20; i++) expect((await subscribe(t, course, `early-${i}`)).status).toBe(201);
    let conflicts = 0;
    const writer = async (i: number): Promise<'seat' | 'full'> => {
      for (;;) {
        const read = await readCourse(t, course);
        if (read.count >= 30) return 'full';
        const res = await subscribe(t, course, `w-${i}`, { failIfEventsMatch: SUBSCRIBED(course), after: read.position });
        if (res.status === 201) return 'seat';
        expect([res.status, res.body.error]).toEqual([409, 'APPEND_CONDITION_FAILED']);
        conflicts++;
      }
    };
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => writer(i)));
    expect(outcomes.filter((o) => o === 'seat')).toHaveLength(10);
    expect(outcomes.filter((o) => o === 'full')).toHaveLength(40);
    expect(conflicts).toBeGreaterThan(0); // they did race
    expect((await readCourse(t, course)).count).toBe(30);
  });

  it('writers on unrelated tags never conflict', async () => {
    const t = await newTenant(svc.url, 'unrelated');
    const reads = await Promise.all(Array.from({ length: 40 }, (_, i) => readCourse(t, `course:u${i}`)));
    // Each writer's condition covers its own course only; the others' appends land after its read position.
    const answers = await Promise.all(
      reads.map((r, i) => subscribe(t, `course:u${i}`, `s-${i}`, { failIfEventsMatch: SUBSCRIBED(`course:u${i}`), after: r.position })),
    );
    expect(answers.map((x) => x.status)).toEqual(answers.map(() => 201));
    // A second wave on the same courses, each from a read before any of the wave's appends.
    const reads2 = await Promise.all(Array.from({ length: 40 }, (_, i) => readCourse(t, `course:u${i}`)));
    const wave2 = await Promise.all(
      reads2.map((r, i) => subscribe(t, `course:u${i}`, `t-${i}`, { failIfEventsMatch: SUBSCRIBED(`course:u${i}`), after: r.position })),
    );
    expect(wave2.map((x) => x.status)).toEqual(wave2.map(() => 201));
  });
});
