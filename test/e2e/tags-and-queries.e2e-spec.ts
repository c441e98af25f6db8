import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';

/**
 * README "Tags and queries" (issue 28 items 1-2), over HTTP on both stores: tags kept exactly on
 * every read, refused with a 400 naming the element when they break a limit (nothing stored), and
 * POST /events/query selecting events by type and tag with GET /events's cursors.
 */
jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

/** The tenant's head: the position of a probe append, less one (the probe has no tags and matches no tag query). */
async function head(c: Client): Promise<number> {
  const res = await c.post('/events', { aggregateId: `probe-${Math.random()}`, eventType: 'Probe', data: {} });
  expect(res.status).toBe(201);
  return res.body.position - 1;
}

describe.each(STORE_BACKENDS)('tags and queries on %s', (backend) => {
  let svc: RunningService;
  let a: Client;

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    a = await newTenant(svc.url, 'tags');
  }, 120_000);
  afterAll(() => svc?.close());

  it('keeps tags exactly and in order on GET /events/{id}, GET /events and POST /events/query; no tags, no field', async () => {
    const tags = ['student:ünï 🎉', 'course:7', 'x'.repeat(200)];
    const one = await a.post('/events', { aggregateId: 'sub-1', eventType: 'Subscribed', data: { n: 1 }, tags });
    expect(one.status).toBe(201);
    expect(one.body).not.toHaveProperty('tags'); // the append's answer is unchanged
    const batch = await a.post('/events/batch', {
      aggregateId: 'sub-1',
      events: [
        { eventType: 'Noted', data: {} },
        { eventType: 'Left', data: {}, tags: ['course:7', 'student:ünï 🎉'] },
      ],
    });
    expect(batch.status).toBe(201);
    const stream = await a.get('/events/sub-1');
    expect(stream.body.events.map((e: any) => e.tags)).toEqual([tags, undefined, ['course:7', 'student:ünï 🎉']]);
    expect(Object.keys(stream.body.events[1])).not.toContain('tags');
    const log = await a.get(`/events?afterPosition=${one.body.position - 1}&limit=3`);
    expect(log.body.events.map((e: any) => e.tags)).toEqual([tags, undefined, ['course:7', 'student:ünï 🎉']]);
    const q = await a.post('/events/query', { items: [{ tags: ['course:7'] }], afterPosition: one.body.position - 1 });
    expect(q.status).toBe(200);
    expect(q.body.events.map((e: any) => [e.eventType, e.tags])).toEqual([
      ['Subscribed', tags],
      ['Left', ['course:7', 'student:ünï 🎉']],
    ]);
    expect(q.body.nextAfterPosition).toBe(batch.body.endPosition);
  });

  it('refuses each broken limit with 400 VALIDATION_FAILED naming the field, and stores nothing', async () => {
    const before = await head(a);
    const cases: [string, unknown, string][] = [
      ['/events', { aggregateId: 'bad-1', eventType: 'E', data: {}, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags'],
      ['/events', { aggregateId: 'bad-1', eventType: 'E', data: {}, tags: ['ok', 'x'.repeat(201)] }, 'tags[1]'],
      ['/events', { aggregateId: 'bad-1', eventType: 'E', data: {}, tags: ['a', ''] }, 'tags[1]'],
      ['/events', { aggregateId: 'bad-1', eventType: 'E', data: {}, tags: ['a\u0007'] }, 'tags[0]'],
      ['/events', { aggregateId: 'bad-1', eventType: 'E', data: {}, tags: ['a', 'b', 'a'] }, 'tags[2]'],
      ['/events', { aggregateId: 'bad-1', eventType: 'E', data: {}, tags: 'a' }, 'tags'],
      [
        '/events/batch',
        {
          aggregateId: 'bad-1',
          events: [
            { eventType: 'E', data: {} },
            { eventType: 'E', data: {}, tags: ['d', 'd'] },
          ],
        },
        'events[1].tags[1]',
      ],
      [
        '/events',
        { aggregateId: 'bad-1', eventType: 'E', data: {}, condition: { failIfEventsMatch: { items: [] } } },
        'condition.failIfEventsMatch.items',
      ],
      [
        '/events',
        { aggregateId: 'bad-1', eventType: 'E', data: {}, condition: { failIfEventsMatch: { items: [{}] }, after: -1 } },
        'condition.after',
      ],
      [
        '/events',
        { aggregateId: 'bad-1', eventType: 'E', data: {}, condition: { failIfEventsMatch: { items: [{}] }, after: 'x' } },
        'condition.after',
      ],
      [
        '/events/batch',
        {
          aggregateId: 'bad-1',
          events: [{ eventType: 'E', data: {} }],
          condition: { failIfEventsMatch: { items: [{ tags: ['t', 't'] }] } },
        },
        'condition.failIfEventsMatch.items[0].tags[1]',
      ],
      ['/events/query', { items: [] }, 'items'],
      ['/events/query', { items: Array.from({ length: 21 }, () => ({})) }, 'items'],
      ['/events/query', { items: [{ types: ['no spaces'] }] }, 'items[0].types[0]'],
      ['/events/query', { items: [{ tag: ['course:7'] }] }, 'items[0].tag'],
      ['/events/query', { items: [{}], limit: 0 }, 'limit'],
      ['/events/query', { items: [{}], direction: 'sideways' }, 'direction'],
      ['/events/query', { items: [{}], direction: 'backward', afterPosition: 3 }, 'afterPosition'],
    ];
    for (const [path, body, field] of cases) {
      const res = await a.post(path, body);
      expect({ path, field, status: res.status, body: res.body }).toEqual({
        path,
        field,
        status: 400,
        body: expect.objectContaining({ error: 'VALIDATION_FAILED', field }),
      });
    }
    expect(await head(a)).toBe(before + 1); // head()'s own probe only
    expect((await a.get('/events/bad-1')).body.events).toEqual([]);
  });

  it('selects by type any-of and tags all-of, items OR-ed, in position order, with forward and backward cursors', async () => {
    const t = await newTenant(svc.url, 'query');
    const put = async (aggregateId: string, eventType: string, tags?: string[]) =>
      (await t.post('/events', { aggregateId, eventType, data: {}, ...(tags ? { tags } : {}) })).body.position as number;
    const p1 = await put('c-1', 'Subscribed', ['course:1', 'student:a']);
    const p2 = await put('c-2', 'Subscribed', ['course:2', 'student:a']);
    await put('c-3', 'Noted', ['course:1']);
    const p4 = await put('c-4', 'Left', ['course:1', 'student:b']);
    await put('c-5', 'Subscribed');
    const query = { items: [{ types: ['Subscribed', 'Left'], tags: ['course:1'] }, { tags: ['student:a', 'course:2'] }] };
    const all = await t.post('/events/query', query);
    expect(all.body.events.map((e: any) => e.position)).toEqual([p1, p2, p4]);
    expect(all.body.nextAfterPosition).toBe(p4);
    const page1 = await t.post('/events/query', { ...query, limit: 2 });
    expect(page1.body.events.map((e: any) => e.position)).toEqual([p1, p2]);
    const page2 = await t.post('/events/query', { ...query, limit: 2, afterPosition: page1.body.nextAfterPosition });
    expect(page2.body.events.map((e: any) => e.position)).toEqual([p4]);
    const empty = await t.post('/events/query', { ...query, afterPosition: p4 });
    expect(empty.body).toEqual({ events: [], nextAfterPosition: p4 });
    const back = await t.post('/events/query', { ...query, direction: 'backward', limit: 2 });
    expect(back.body.events.map((e: any) => e.position)).toEqual([p4, p2]);
    expect(back.body.nextBeforePosition).toBe(p2);
    const rest = await t.post('/events/query', { ...query, direction: 'backward', limit: 2, beforePosition: p2 });
    expect(rest.body).toEqual({ events: [expect.objectContaining({ position: p1 })] });
    // An item with neither types nor tags matches every event.
    expect((await t.post('/events/query', { items: [{}] })).body.events).toHaveLength(5);
  });

  it('needs events:read', async () => {
    const made = await a.post('/auth/keys', { scopes: ['events:write'], name: 'writer' });
    expect(made.status).toBe(201);
    const res = await fetch(`${svc.url}/events/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': made.body.apiKey },
      body: JSON.stringify({ items: [{}] }),
    });
    expect(res.status).toBe(403);
  });
});
