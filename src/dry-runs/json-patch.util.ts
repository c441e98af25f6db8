/** One RFC 6902 operation; a diff only ever needs these three. */
export type JsonPatchOp =
  { op: 'add'; path: string; value: unknown } | { op: 'remove'; path: string } | { op: 'replace'; path: string; value: unknown };

/** RFC 6901: `~` and `/` escaped in a path segment. */
const segment = (s: string | number) => String(s).replace(/~/g, '~0').replace(/\//g, '~1');

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The RFC 6902 JSON Patch that turns `from` into `to` (applied in order): objects compared member by
 * member (removals, then changes and additions in `to`'s member order), arrays element by element
 * (common prefix compared, the longer one's tail added or removed from the end), anything else
 * replaced whole. No `move`/`copy`: a reader sees each change where it is. No library in the
 * service's dependencies writes one, and this is all a dry run's diff needs.
 */
export function jsonPatch(from: unknown, to: unknown, path = ''): JsonPatchOp[] {
  if (deepEqual(from, to)) return [];
  if (isObject(from) && isObject(to)) {
    const ops: JsonPatchOp[] = [];
    for (const k of Object.keys(from)) if (!Object.hasOwn(to, k)) ops.push({ op: 'remove', path: `${path}/${segment(k)}` });
    for (const k of Object.keys(to)) {
      const p = `${path}/${segment(k)}`;
      if (!Object.hasOwn(from, k)) ops.push({ op: 'add', path: p, value: to[k] });
      else ops.push(...jsonPatch(from[k], to[k], p));
    }
    return ops;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    const ops: JsonPatchOp[] = [];
    const common = Math.min(from.length, to.length);
    for (let i = 0; i < common; i++) ops.push(...jsonPatch(from[i], to[i], `${path}/${i}`));
    // From the end backwards, so each index is still valid when its removal is applied.
    for (let i = from.length - 1; i >= common; i--) ops.push({ op: 'remove', path: `${path}/${i}` });
    for (let i = common; i < to.length; i++) ops.push({ op: 'add', path: `${path}/${i}`, value: to[i] });
    return ops;
  }
  return [{ op: 'replace', path, value: to }];
}

/** Applies a patch this module wrote (tests prove a diff by applying it). */
export function applyJsonPatch(doc: unknown, ops: JsonPatchOp[]): unknown {
  let root = structuredClone(doc);
  for (const op of ops) {
    if (op.path === '') {
      if (op.op === 'remove') throw new Error('cannot remove the root');
      root = structuredClone(op.value);
      continue;
    }
    const parts = op.path
      .slice(1)
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = parts.pop()!;
    let parent: any = root;
    for (const p of parts) parent = parent[Array.isArray(parent) ? Number(p) : p];
    if (Array.isArray(parent)) {
      const i = Number(last);
      if (op.op === 'add') parent.splice(i, 0, structuredClone(op.value));
      else if (op.op === 'remove') parent.splice(i, 1);
      else parent[i] = structuredClone(op.value);
    } else if (op.op === 'remove') delete parent[last];
    else parent[last] = structuredClone(op.value);
  }
  return root;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}
