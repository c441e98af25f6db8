import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from './runtime-harness';

/**
 * Sources that are cheap to write and costly to compile (test/fixtures/pathological), and deeply
 * nested ones generated here (too big to keep as files). Each is one file of a reducer archive.
 */
export interface PathologicalSource {
  name: string;
  files: { path: string; content: string }[];
}

const DIR = path.join(REPO, 'test', 'fixtures', 'pathological');

export function pathologicalFixture(name: string): PathologicalSource {
  const file = `${name}.cs`;
  return { name, files: [{ path: file, content: fs.readFileSync(path.join(DIR, file), 'utf8') }] };
}

/** Every fixture file: the compiler-time and compiler-memory blow-ups. */
export function pathologicalFixtures(): PathologicalSource[] {
  return fs
    .readdirSync(DIR)
    .filter((f) => f.endsWith('.cs'))
    .sort()
    .map((f) => pathologicalFixture(f.slice(0, -3)));
}

const reducer = (name: string, body: string) =>
  `using System;\nusing EventSourcing;\npublic sealed class S { }\npublic sealed class ${name}Reducer : IReducer<S>\n{\n    public S Apply(S s, Event e) { ${body} return s; }\n}\n`;

/** `n` nested parentheses: once a stack overflow of the compiler, now refused by the nesting limit (CS8078). */
export function deepParentheses(n = 100_000): PathologicalSource {
  return {
    name: `deep-parentheses-${n}`,
    files: [{ path: 'DeepParens.cs', content: reducer('DeepParens', `var x = ${'('.repeat(n)}1${')'.repeat(n)};`) }],
  };
}

/** `n` nested negations (no brackets to count): needs the compiler's large stack to compile at all. */
export function deepNegations(n = 100_000): PathologicalSource {
  return { name: `deep-negations-${n}`, files: [{ path: 'DeepNot.cs', content: reducer('DeepNot', `var x = ${'!'.repeat(n)}true;`) }] };
}
