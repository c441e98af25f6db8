import { appendStatement, conditionRaceItems } from './postgres-event-log-statements';

const placeholders = (text: string) => [...new Set([...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);

describe('the group commit statement', () => {
  it.each([
    [{ tags: false, conditions: false }, 'es_append', 7],
    [{ tags: true, conditions: false }, 'es_append_t', 8],
    [{ tags: false, conditions: true }, 'es_append_c', 8],
    [{ tags: true, conditions: true }, 'es_append_t_c', 9],
  ])('%o is %s, taking exactly $1..$%d (pg refuses a bind with more or fewer values)', (shape, name, count) => {
    const s = appendStatement(shape);
    expect(s.name).toBe(name);
    expect(placeholders(s.text)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    expect(s.text.includes('event_tags')).toBe(shape.tags);
    expect(s.text.includes('es_condition_raced')).toBe(shape.conditions);
  });
});

describe('the conditions decided under the locks (conditionRaceItems)', () => {
  it('flattens every item of every condition, with its tenant and after, tags and types made distinct', () => {
    const items = JSON.parse(
      conditionRaceItems([
        { index: 0, tenantId: 't-1', query: { items: [{ tags: ['a', 'b', 'a'], types: ['X'] }, { types: ['Y', 'Y'] }] }, after: 12 },
        { index: 3, tenantId: "t'2", query: { items: [{}] }, after: 0 },
      ]),
    );
    expect(items).toEqual([
      { t: 't-1', a: 12, g: ['a', 'b'], y: ['X'] },
      { t: 't-1', a: 12, g: [], y: ['Y'] },
      { t: "t'2", a: 0, g: [], y: [] },
    ]);
  });
});
