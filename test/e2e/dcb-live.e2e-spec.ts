import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { SseCollector, WsCollector } from '../support/stream-clients';
import { bindAndCatchUp, deployReducer, projectionActive, uploadProjection, until } from '../support/tenant-code';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Issue 28 on the live paths, both stores: the DCB `query` on GET /events, on GET /events/stream
 * (WebSocket and SSE) and on event webhooks, each AND-ed with the type filters and delivering exactly
 * the matching events with their tags; events without tags exactly as before (no `tags` field); and
 * tags reaching tenant code (a reducer's state recording `e.Tags`, a projection keyed by a tag).
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const FAST_WEBHOOKS = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_BACKOFF_MS: '50,50',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '2000',
};

/** (Subscribed with course:7) OR (anything tagged student:bob). */
const QUERY = { items: [{ types: ['Subscribed'], tags: ['course:7'] }, { tags: ['student:bob'] }] };
const q = (query: unknown) => `query=${encodeURIComponent(JSON.stringify(query))}`;

type Spec = { aggregateId: string; eventType: string; tags?: string[] };
/** A mix: matching and not, tagged and not, over two aggregate types. */
const MIX: Spec[] = [
  { aggregateId: 'course-7', eventType: 'Subscribed', tags: ['course:7', 'student:ann'] }, // match
  { aggregateId: 'course-8', eventType: 'Subscribed', tags: ['course:8', 'student:ann'] },
  { aggregateId: 'course-7', eventType: 'Renamed', tags: ['course:7'] },
  { aggregateId: 'course-7', eventType: 'Subscribed' }, // no tags: matches no tag item
  { aggregateId: 'student-1', eventType: 'Registered', tags: ['student:bob'] }, // match (second item)
  { aggregateId: 'course-9', eventType: 'Subscribed', tags: ['student:cat', 'course:7'] }, // match
];
const MATCHING = [0, 4, 5];

async function appendAll(c: Client, specs: Spec[]): Promise<number[]> {
  const positions: number[] = [];
  for (const s of specs) {
    const r = await c.post('/events', { aggregateId: s.aggregateId, eventType: s.eventType, data: { n: positions.length }, tags: s.tags });
    if (r.status !== 201) throw new Error(`append: ${r.status} ${JSON.stringify(r.body)}`);
    positions.push(r.body.position);
  }
  return positions;
}

const REDUCER = `
using System.Collections.Generic;
using EventSourcing;
namespace Dcb
{
    public sealed class Seen { public List<string> Tags { get; set; } = new(); public int Untagged { get; set; } }
    public sealed class TagsReducer : IReducer<Seen>
    {
        public Seen Apply(Seen s, Event e)
        {
            if (e.Tags.Count == 0) s.Untagged++;
            s.Tags.AddRange(e.Tags);
            return s;
        }
    }
}`;

const PROJECTION = `
using System.Collections.Generic;
using System.Linq;
using EventSourcing;
namespace Dcb
{
    public sealed class Enrolment { public List<string> Students { get; set; } = new(); }
    [ProjectionName("enrolment-per-course")]
    public sealed class EnrolmentProjection : IProjection<Enrolment>
    {
        // The key: the value of the event's course: tag (none: the event is not a course's).
        public string? ResolveKey(Event e) => e.Tags.FirstOrDefault(t => t.StartsWith("course:"))?.Substring(7);
        public Enrolment Apply(Enrolment s, Event e)
        {
            if (e.EventType == "Subscribed") s.Students.Add(e.Tags.First(t => t.StartsWith("student:")).Substring(8));
            return s;
        }
    }
}`;

describe.each(STORE_BACKENDS)('tags and queries on the live paths (%s)', (backend) => {
  let svc: RunningService;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    svc = await startService({ ...(await envFor(backend)), ...FAST_WEBHOOKS });
  }, 120_000);
  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await svc?.close();
  });

  it('GET /events?query= answers exactly the matching events with their tags, AND-ed with the type filters; a bad query is a 400', async () => {
    const c = await newTenant(svc.url, `dcb-log-${backend}`);
    const positions = await appendAll(c, MIX);
    const read = await c.get(`/events?afterPosition=0&${q(QUERY)}`);
    expect(read.status).toBe(200);
    expect(read.body.events.map((e: any) => e.position)).toEqual(MATCHING.map((i) => positions[i]));
    expect(read.body.events.map((e: any) => e.tags)).toEqual(MATCHING.map((i) => MIX[i].tags));
    expect(read.body.nextAfterPosition).toBe(positions[5]);
    // The same events as the plain log read shows them.
    const all = await c.get('/events?afterPosition=0');
    expect(read.body.events).toEqual(MATCHING.map((i) => all.body.events[i]));
    // An event without tags has no `tags` field at all; one with tags has them in the order appended.
    expect(Object.keys(all.body.events[3])).not.toContain('tags');
    expect(all.body.events[5].tags).toEqual(['student:cat', 'course:7']);
    // AND-ed with aggregateType; backward pages too.
    const courses = await c.get(`/events?afterPosition=0&aggregateType=course&${q(QUERY)}`);
    expect(courses.body.events.map((e: any) => e.position)).toEqual([positions[0], positions[5]]);
    const back = await c.get(`/events?direction=backward&limit=2&${q(QUERY)}`);
    expect(back.body.events.map((e: any) => e.position)).toEqual([positions[5], positions[4]]);
    expect(back.body.nextBeforePosition).toBe(positions[4]);
    // Bad queries: the field names the element; nothing else is read.
    for (const [bad, field] of [
      ['not json', 'query'],
      [JSON.stringify({ items: [] }), 'query.items'],
      [JSON.stringify({ items: [{ tags: ['a', 'a'] }] }), 'query.items[0].tags[1]'],
      [JSON.stringify({ items: [{ tag: ['a'] }] }), 'query.items[0].tag'],
    ]) {
      const r = await c.get(`/events?query=${encodeURIComponent(bad)}`);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'VALIDATION_FAILED', field });
    }
  });

  it('a WebSocket and an SSE stream with a query deliver exactly the matching events, backlog then live, with tags; a bad query is refused', async () => {
    const c = await newTenant(svc.url, `dcb-streams-${backend}`);
    const before = await appendAll(c, MIX);
    const ws = await WsCollector.openEvents(svc.url, c.key, `?afterPosition=0&${q(QUERY)}`);
    const sse = await SseCollector.openEvents(svc.url, c.key, `?afterPosition=0&${q(QUERY)}`);
    try {
      const after = await appendAll(c, MIX);
      const expected = [...MATCHING.map((i) => before[i]), ...MATCHING.map((i) => after[i])];
      await until(
        () => Promise.resolve([ws.positions(), sse.positions()]),
        ([w, s]) => w.length >= expected.length && s.length >= expected.length,
        20_000,
        'the matching events on both streams',
      );
      // A later event past the last match: when it arrives, nothing else can still be on its way before it.
      const last = (await appendAll(c, [{ aggregateId: 'course-7', eventType: 'Subscribed', tags: ['course:7'] }]))[0];
      await until(
        () => Promise.resolve([ws.positions(), sse.positions()]),
        ([w, s]) => w.includes(last) && s.includes(last),
        20_000,
        'the closing event',
      );
      expect(ws.positions()).toEqual([...expected, last]);
      expect(sse.positions()).toEqual([...expected, last]);
      const log = await c.get(`/events?afterPosition=0&${q(QUERY)}`);
      const asLogged = log.body.events.map((e: any) => ({ type: 'event', ...e }));
      expect(ws.messages).toEqual(asLogged);
      expect(sse.events.map((e) => e.data)).toEqual(asLogged);
      expect(ws.messages[0].tags).toEqual(['course:7', 'student:ann']);
    } finally {
      await ws.close();
      sse.close();
    }
    // The type filter AND the query: only course events.
    const typed = await WsCollector.openEvents(svc.url, c.key, `?afterPosition=0&aggregateType=student&${q(QUERY)}`);
    try {
      await until(
        () => Promise.resolve(typed.positions()),
        (p) => p.length >= 2,
        20_000,
        'the student events',
      );
      expect(typed.messages.every((m) => m.aggregateType === 'student' && m.tags.includes('student:bob'))).toBe(true);
    } finally {
      await typed.close();
    }
    const bad = `?${q({ items: [{ types: ['Subscribed'], tags: [''] }] })}`;
    await expect(WsCollector.openEvents(svc.url, c.key, bad)).rejects.toMatchObject({ status: 400 });
    await expect(WsCollector.openEvents(svc.url, c.key, `?${q(QUERY)}&${q(QUERY)}`)).rejects.toMatchObject({ status: 400 }); // given twice
    await expect(SseCollector.openEvents(svc.url, c.key, bad)).rejects.toMatchObject({
      status: 400,
      body: { error: 'VALIDATION_FAILED', field: 'query.items[0].tags[0]' },
    });
  });

  it('an event webhook with a query delivers only the matching events, with tags, and shows its query', async () => {
    const c = await newTenant(svc.url, `dcb-webhook-${backend}`);
    const rx = await new WebhookReceiver().start();
    receivers.push(rx);
    const bad = await c.post('/event-webhooks', { url: rx.url, query: { items: [{ types: 'Subscribed' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'VALIDATION_FAILED', field: 'query.items[0].types' });
    expect((await c.get('/event-webhooks')).body.eventWebhooks).toEqual([]); // nothing stored
    const positions = await appendAll(c, MIX);
    const made = await c.post('/event-webhooks', { url: rx.url, afterPosition: 0, eventTypes: ['Subscribed', 'Registered'], query: QUERY });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ query: QUERY, eventTypes: ['Subscribed', 'Registered'], aggregateTypes: null });
    rx.secrets = [made.body.secret];
    const later = await appendAll(c, MIX);
    const expected = [...MATCHING.map((i) => positions[i]), ...MATCHING.map((i) => later[i])];
    await until(
      () => Promise.resolve(rx.accepted.length),
      (n) => n >= expected.length,
      30_000,
      'the matching deliveries',
    );
    // The last event of the log matches: with the cursor on it, nothing more is coming.
    await until(
      () => c.get(`/event-webhooks/${made.body.webhookId}`),
      (r) => r.body.deliveredPosition === later[5],
      30_000,
      'the cursor at the head',
    );
    expect(rx.accepted.map((a) => a.body.position)).toEqual(expected);
    const log = await c.get(`/events?afterPosition=0&${q(QUERY)}`);
    expect(rx.accepted.map((a) => a.body)).toEqual(log.body.events.map((e: any) => ({ type: 'event', ...e })));
    expect(rx.accepted[1].body.tags).toEqual(['student:bob']);
    expect((await c.get(`/event-webhooks/${made.body.webhookId}`)).body.query).toEqual(QUERY);
  });

  it('tags reach tenant code: a reducer records e.Tags, a projection keys by the course: tag; untagged events read as before', async () => {
    const c = await newTenant(svc.url, `dcb-code-${backend}`);
    await deployReducer(svc.url, c.key, 'tags-reducer', [{ path: 'Tags.cs', content: REDUCER }]);
    await bindAndCatchUp(svc.url, c.key, 'course', 'tags-reducer', 'Dcb.TagsReducer');
    const first = await c.post('/events', {
      aggregateId: 'course-7',
      eventType: 'Subscribed',
      data: {},
      tags: ['course:7', 'student:ann'],
    });
    expect(first.status).toBe(201);
    expect(first.body.state).toEqual({ tags: ['course:7', 'student:ann'], untagged: 0 });
    const plain = await c.post('/events', { aggregateId: 'course-7', eventType: 'Renamed', data: {} });
    expect(plain.body.state).toEqual({ tags: ['course:7', 'student:ann'], untagged: 1 });
    // The state read folds the stored events again (tags from the store this time).
    const state = await c.get('/aggregate-types/course/course-7/state');
    expect(state.status).toBe(200);
    expect(state.body.state).toEqual(plain.body.state);

    const upload = await uploadProjection(svc.url, c.key, [{ path: 'Enrolment.cs', content: PROJECTION }]);
    const projectionId = await projectionActive(svc.url, c.key, upload.uploadId);
    await appendAll(c, [
      { aggregateId: 'sub-1', eventType: 'Subscribed', tags: ['student:bob', 'course:8'] },
      { aggregateId: 'sub-2', eventType: 'Subscribed', tags: ['course:7', 'student:cat'] },
      { aggregateId: 'other-1', eventType: 'Subscribed' }, // no course: no key
    ]);
    const course7 = await until(
      () => c.get(`/projections/${projectionId}/state/7`),
      (r) => r.status === 200 && r.body.state.students?.length === 2,
      60_000,
      'course 7',
    );
    expect(course7.body.state).toEqual({ students: ['ann', 'cat'] });
    const course8 = await until(
      () => c.get(`/projections/${projectionId}/state/8`),
      (r) => r.status === 200,
      60_000,
      'course 8',
    );
    expect(course8.body.state).toEqual({ students: ['bob'] });
  });
});
