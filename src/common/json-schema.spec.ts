import * as path from 'node:path';
import * as ts from 'typescript';
import { Appended, APPENDED_SCHEMA } from '../events/event-views';
import { arrayOf, constant, Infer, integer, nullable, object, oneOfStrings, string, withLeadingFields } from './json-schema';

// Each `@ts-expect-error` below must meet a type error, or the compiler reports the directive as
// unused (TS2578): the last case type-checks this file (ts-jest only transpiles it) and expects no
// error at all. So these lines prove that a view typed by its schema cannot drift from it.
const appended = { eventId: 'e', aggregateId: 'a', aggregateType: 'T', version: 1, timestamp: '2026-01-01T00:00:00.000Z', position: 1 };

describe('a schema and the type of the values it describes', () => {
  it('refuses a view field the schema does not have', () => {
    const view: Appended = {
      ...appended,
      // @ts-expect-error: `colour` is not in APPENDED_SCHEMA
      colour: 'red',
    };
    expect(Object.keys(view)).toContain('colour');
  });

  it('refuses a view that leaves out a field the schema requires', () => {
    const { position: _position, ...withoutPosition } = appended;
    // @ts-expect-error: APPENDED_SCHEMA requires `position`
    const view: Appended = withoutPosition;
    expect((APPENDED_SCHEMA.required as string[]).filter((f) => !(f in view))).toEqual(['position']);
  });

  it('refuses a field of another type, and a value outside an enum or constant', () => {
    const schema = object({ n: integer(), kind: constant('a'), status: oneOfStrings(['on', 'off']), at: nullable(string()) });
    type Value = Infer<typeof schema>;
    // @ts-expect-error: n is an integer
    const wrongType: Value = { n: '1', kind: 'a', status: 'on', at: null };
    // @ts-expect-error: kind is the constant 'a'
    const wrongConstant: Value = { n: 1, kind: 'b', status: 'on', at: null };
    // @ts-expect-error: status is 'on' or 'off'
    const wrongEnum: Value = { n: 1, kind: 'a', status: 'maybe', at: null };
    const right: Value = { n: 1, kind: 'a', status: 'off', at: 'x' };
    expect(schema.required).toEqual(Object.keys(right));
    expect([wrongType, wrongConstant, wrongEnum]).toHaveLength(3);
  });

  it('lets optional fields be left out, and only those', () => {
    const schema = object({ id: string() }, { next: string() });
    const without: Infer<typeof schema> = { id: 'a' };
    // @ts-expect-error: id is required
    const withoutId: Infer<typeof schema> = { next: 'b' };
    expect(schema.required).toEqual(Object.keys(without));
    expect(withoutId).not.toHaveProperty('id');
  });

  it('writes the same JSON Schema as before it carried a type', () => {
    expect(object({ a: arrayOf(string()) }, { b: integer({ minimum: 1 }) }, { description: 'd' })).toEqual({
      type: 'object',
      properties: { a: { type: 'array', items: { type: 'string' } }, b: { type: 'integer', minimum: 1 } },
      required: ['a'],
      description: 'd',
    });
    expect(oneOfStrings(['x', 'y'])).toEqual({ enum: ['x', 'y'] });
    expect(withLeadingFields({ type: constant('event') }, object({ id: string() }))).toEqual({
      type: 'object',
      properties: { type: { const: 'event' }, id: { type: 'string' } },
      required: ['type', 'id'],
    });
  });

  it('holds: every @ts-expect-error above meets its error, and nothing else fails to type-check', () => {
    const configFile = path.join(__dirname, '../../tsconfig.json');
    const { config } = ts.readConfigFile(configFile, (f) => ts.sys.readFile(f));
    const { options } = ts.parseJsonConfigFileContent(config, ts.sys, path.dirname(configFile));
    const program = ts.createProgram([__filename], { ...options, noEmit: true, incremental: false });
    const errors = ts
      .getPreEmitDiagnostics(program, program.getSourceFile(__filename))
      .map((d) => `${d.start ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(errors).toEqual([]);
  });
});
