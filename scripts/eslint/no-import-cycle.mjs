// A local ESLint rule: no file-level import cycle, counting every kind of import. import-x/no-cycle
// skips `import type` (hard-coded in the plugin, no option turns it back on), and a cycle through a
// type is still two files that can only be read together. The graph is every relative import, export-from,
// `import type`, `import()` and `require()` of the TypeScript files under the linted roots, read with the
// compiler's own pre-processor (ts.preProcessFile), and the cycles are its strongly connected components
// (Tarjan). Built once per ESLint process: the CLI lints a snapshot of the tree.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOTS = ['src', 'test', 'bench'];

function listTs(dir, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) listTs(p, out);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The file a relative specifier names, as the compiler (CommonJS resolution of `.ts`) would find it. */
function resolveRelative(fromFile, specifier) {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = path.resolve(path.dirname(fromFile), specifier);
  const stem = base.replace(/\.js$/, '');
  for (const candidate of [base, `${stem}.ts`, path.join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** file → [{ target, line }] for every relative import of a file under the roots. */
function importGraph(rootDir) {
  const graph = new Map();
  const files = ROOTS.map((r) => path.join(rootDir, r))
    .filter((d) => fs.existsSync(d))
    .flatMap((d) => listTs(d, []));
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const info = ts.preProcessFile(text, true, true);
    const edges = [];
    for (const ref of info.importedFiles) {
      const target = resolveRelative(file, ref.fileName);
      if (target) edges.push({ target, specifier: ref.fileName, pos: ref.pos });
    }
    graph.set(file, edges);
  }
  return graph;
}

/** file → its strongly connected component (only components of more than one file, or a self-import). */
function cyclicComponents(graph) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const componentOf = new Map();
  let next = 0;
  // Iterative Tarjan: the tree is deep enough that recursion is not worth the risk.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const target = edges[frame.edge++].target;
        if (!graph.has(target)) continue;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node), index.get(target)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent), low.get(frame.node)));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfImport = edges.some((e) => e.target === frame.node);
        if (component.length > 1 || selfImport) {
          const members = new Set(component);
          for (const m of component) componentOf.set(m, members);
        }
      }
    }
  }
  return componentOf;
}

/** The shortest way back from `target` to `file` inside their component, for the message. */
function pathBack(graph, component, target, file) {
  const previous = new Map([[target, undefined]]);
  const queue = [target];
  while (queue.length > 0) {
    const node = queue.shift();
    if (node === file) break;
    for (const { target: t } of graph.get(node) ?? []) {
      if (component.has(t) && !previous.has(t)) {
        previous.set(t, node);
        queue.push(t);
      }
    }
  }
  const chain = [];
  for (let n = file; n !== undefined; n = previous.get(n)) chain.unshift(n);
  return chain;
}

let cached;
function analysis(rootDir) {
  if (!cached || cached.rootDir !== rootDir) {
    const graph = importGraph(rootDir);
    cached = { rootDir, graph, componentOf: cyclicComponents(graph) };
  }
  return cached;
}

export function importCycles(rootDir) {
  const { componentOf } = analysis(rootDir);
  const seen = new Set();
  const cycles = [];
  for (const component of componentOf.values()) {
    if (seen.has(component)) continue;
    seen.add(component);
    cycles.push([...component].map((f) => path.relative(rootDir, f)).sort());
  }
  return cycles;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'no file-level import cycle, type-only imports included' },
    schema: [
      {
        type: 'object',
        properties: {
          rootDir: { type: 'string' },
          // Files (relative to rootDir) whose cycle is known and being removed: a cycle wholly among them is not reported.
          pending: { type: 'array', items: { type: 'string' } },
        },
        additionalProperties: false,
      },
    ],
    messages: { cycle: 'import cycle (type imports count): {{chain}}' },
  },
  create(context) {
    const rootDir = context.options[0]?.rootDir ?? context.cwd;
    const file = path.resolve(context.physicalFilename);
    const { graph, componentOf } = analysis(rootDir);
    const component = componentOf.get(file);
    if (!component) return {};
    const pending = new Set((context.options[0]?.pending ?? []).map((p) => path.resolve(rootDir, p)));
    if ([...component].every((m) => pending.has(m))) return {};
    return {
      Program() {
        const source = context.sourceCode;
        const reported = new Set();
        for (const edge of graph.get(file) ?? []) {
          if (!component.has(edge.target) || reported.has(edge.target)) continue;
          reported.add(edge.target);
          const chain = [file, ...pathBack(graph, component, edge.target, file)].map((f) => path.relative(rootDir, f));
          context.report({ loc: source.getLocFromIndex(edge.pos), messageId: 'cycle', data: { chain: chain.join(' → ') } });
        }
      },
    };
  },
};
