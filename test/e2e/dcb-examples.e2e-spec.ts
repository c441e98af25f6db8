import { Api, COURSE_CAPACITY, numberInvoice, readAll, register, rename, STUDENT_COURSE_LIMIT, subscribe } from '../support/dcb-clients';
import { range } from '../support/multi-instance';
import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';

/**
 * docs/dcb.md's three worked examples, run as their clients (test/support/dcb-clients.ts, the code
 * the doc shows) over real HTTP, many at once, on both stores: read by query, decide, append with
 * the condition, retry on 409 APPEND_CONDITION_FAILED. What they must keep: a course's capacity and
 * a student's limit, one holder per username, invoice numbers 1..N each once.
 */
jest.setTimeout(240_000);
afterAll(() => stopBackends(), 60_000);

const apiOf =
  (c: Client): Api =>
  (p, body) =>
    c.post(p, body);

const count = <T>(xs: T[], key: (x: T) => string): Record<string, number> =>
  xs.reduce<Record<string, number>>((m, x) => ((m[key(x)] = (m[key(x)] ?? 0) + 1), m), {});

describe.each(STORE_BACKENDS)('the docs/dcb.md examples on %s', (backend) => {
  let svc: RunningService;

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
  }, 120_000);
  afterAll(() => svc?.close());

  describe('course subscriptions', () => {
    it('refuses an append when a matching event arrived after the read position, and accepts it after a re-read', async () => {
      const api = apiOf(await newTenant(svc.url, 'dcb-course-cond'));
      const items = [
        { types: ['StudentSubscribedToCourse'], tags: ['course:c0'] },
        { types: ['StudentSubscribedToCourse'], tags: ['student:s1'] },
      ];
      const read = await readAll(api, items);
      expect(read).toEqual({ events: [], position: 0 });
      // Someone else subscribes to the course between our read and our append.
      const other = await subscribe(api, 'c0', 's2');
      expect(other.outcome).toBe('subscribed');
      // An unrelated event (another course) does not count against the condition.
      expect((await subscribe(api, 'c9', 's3')).outcome).toBe('subscribed');
      const body = (after: number) => ({
        aggregateId: 'subscription-c0-s1',
        eventType: 'StudentSubscribedToCourse',
        data: { courseId: 'c0', studentId: 's1' },
        tags: ['course:c0', 'student:s1'],
        condition: { failIfEventsMatch: { items }, after },
      });
      const refused = await api('/events', body(read.position));
      expect(refused.status).toBe(409);
      const again = await readAll(api, items);
      expect(again.events).toHaveLength(1);
      expect(refused.body).toMatchObject({ error: 'APPEND_CONDITION_FAILED', position: again.events[0].position, after: 0 });
      // Nothing of the refused append was stored.
      expect((await readAll(api, [{ tags: ['student:s1'] }])).events).toEqual([]);
      const accepted = await api('/events', body(again.position));
      expect(accepted.status).toBe(201);
      expect((await readAll(api, [{ tags: ['student:s1'] }])).events.map((e) => e.eventId)).toEqual([accepted.body.eventId]);
    });

    it('50 students racing for a 30-seat course: exactly 30 subscribed, the other 20 told it is full', async () => {
      const api = apiOf(await newTenant(svc.url, 'dcb-course-race'));
      const results = await Promise.all(range(1, 50).map((s) => subscribe(api, 'c1', `s${s}`)));
      expect(count(results, (r) => r.outcome)).toEqual({ subscribed: COURSE_CAPACITY, 'course-full': 50 - COURSE_CAPACITY });
      // They raced: conditions refused appends, which were retried after a re-read.
      expect(results.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
      const { events } = await readAll(api, [{ types: ['StudentSubscribedToCourse'], tags: ['course:c1'] }]);
      expect(events).toHaveLength(COURSE_CAPACITY);
      expect(new Set(events.map((e) => e.data.studentId)).size).toBe(COURSE_CAPACITY);
      for (const e of events) expect(e.tags).toEqual(['course:c1', `student:${e.data.studentId}`]);
    });

    it('8 students each trying 8 courses at once: every student ends with exactly 5', async () => {
      const api = apiOf(await newTenant(svc.url, 'dcb-student-limit'));
      const students = range(1, 8).map((s) => `s${s}`);
      const courses = range(1, 8).map((c) => `c${c}`);
      const results = await Promise.all(students.flatMap((s) => courses.map(async (c) => ({ s, c, ...(await subscribe(api, c, s)) }))));
      for (const s of students) {
        const mine = results.filter((r) => r.s === s);
        expect(count(mine, (r) => r.outcome)).toEqual({
          subscribed: STUDENT_COURSE_LIMIT,
          'student-limit': courses.length - STUDENT_COURSE_LIMIT,
        });
        const { events } = await readAll(api, [{ types: ['StudentSubscribedToCourse'], tags: [`student:${s}`] }]);
        expect(events.map((e) => e.data.courseId).sort()).toEqual(
          mine
            .filter((r) => r.outcome === 'subscribed')
            .map((r) => r.c)
            .sort(),
        );
      }
    });
  });

  describe('unique usernames', () => {
    it('20 concurrent registrations of one name: exactly one holds it', async () => {
      const api = apiOf(await newTenant(svc.url, 'dcb-username-race'));
      const results = await Promise.all(range(1, 20).map((u) => register(api, `u${u}`, 'alice')));
      expect(count(results, (r) => r.outcome)).toEqual({ registered: 1, taken: 19 });
      const { events } = await readAll(api, [{ tags: ['username:alice'] }]);
      expect(events).toHaveLength(1);
      const winner = `u${results.findIndex((r) => r.outcome === 'registered') + 1}`;
      expect(events[0]).toMatchObject({
        aggregateId: `user-${winner}`,
        eventType: 'UserRegistered',
        tags: [`user:${winner}`, 'username:alice'],
      });
    });

    it('a rename releases the old name for the next user and takes the new one; racers for a name still get one holder', async () => {
      const api = apiOf(await newTenant(svc.url, 'dcb-username-rename'));
      expect((await register(api, 'u1', 'alice')).outcome).toBe('registered');
      expect((await register(api, 'u2', 'alice')).outcome).toBe('taken');
      expect((await rename(api, 'u1', 'alicia')).outcome).toBe('renamed');
      // alice is free again (the rename released it: a condition with `after` = the release), alicia is not.
      expect((await register(api, 'u2', 'alicia')).outcome).toBe('taken');
      expect((await register(api, 'u2', 'alice')).outcome).toBe('registered');
      // A second rename releases alicia too.
      expect((await rename(api, 'u1', 'ally')).outcome).toBe('renamed');
      expect((await register(api, 'u3', 'alicia')).outcome).toBe('registered');

      // Renames and registrations racing for one name: one wins, whichever kind.
      const users = range(10, 19).map((u) => `u${u}`);
      for (const u of users.slice(0, 5)) expect((await register(api, u, `name-${u}`)).outcome).toBe('registered');
      const results = await Promise.all([
        ...users.slice(0, 5).map((u) => rename(api, u, 'bob')),
        ...users.slice(5).map((u) => register(api, u, 'bob')),
      ]);
      expect(results.filter((r) => r.outcome !== 'taken')).toHaveLength(1);
      const holders = (await readAll(api, [{ tags: ['username:bob'] }])).events;
      expect(holders).toHaveLength(1);
    });
  });

  describe('gap-free invoice numbers', () => {
    it('40 concurrent numberings get 1..40, each once, in position order', async () => {
      const api = apiOf(await newTenant(svc.url, 'dcb-invoices'));
      const results = await Promise.all(range(1, 40).map((i) => numberInvoice(api, `inv-${i}`)));
      expect(results.map((r) => r.number).sort((a, b) => a - b)).toEqual(range(1, 40));
      const { events } = await readAll(api, [{ types: ['InvoiceNumbered'] }]);
      // Stored in number order: each was appended only once the previous one was read.
      expect(events.map((e) => e.data.number)).toEqual(range(1, 40));
      expect(new Set(events.map((e) => e.aggregateId)).size).toBe(40);
    });
  });
});
