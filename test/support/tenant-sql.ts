/**
 * Does a SQL statement constrain the tenant on every tenant-data table it reads or writes? A
 * careful tokenizer, not a full parser (none is among the dependencies): enough for the SQL this
 * repository writes, and strict where it is unsure (an unknown shape is reported, not passed).
 *
 * The rule, per query block (the statement, each parenthesised SELECT, each part of an
 * INSERT … SELECT or a UNION): every tenant-data table the block names after FROM, JOIN, UPDATE,
 * INTO or USING must have its `tenant_id` in a filter of that block — after WHERE, ON, USING or
 * HAVING, or in an INSERT's column list. With one tenant table in the block a bare `tenant_id`
 * counts; with several, each needs `alias.tenant_id` (or a `USING (… tenant_id …)` join).
 * `tenant_id` only in the select list does not count: that is a scan of all tenants.
 * What it does not check: that the condition is an equality with one tenant (`tenant_id <> ?`
 * would pass); a correlated `t.tenant_id = outer.tenant_id` counts, the outer block being checked
 * in turn.
 */

type Token = string;
interface Group {
  items: (Token | Group)[];
}

const KEYWORDS = new Set(
  (
    'select from where on using join inner left right full cross outer natural group order by limit offset set values returning ' +
    'union all except intersect as lateral do conflict nothing update delete insert into and or not having window for fetch with ' +
    'recursive distinct case when then else end is null in exists between like returning desc asc nulls first last materialized'
  ).split(' '),
);

/** Lower-cased tokens; string literals become `'?'`, comments and whitespace go. */
export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (/\s/.test(c)) i++;
    else if (sql.startsWith('--', i)) i = sql.indexOf('\n', i) < 0 ? sql.length : sql.indexOf('\n', i);
    else if (sql.startsWith('/*', i)) i = sql.indexOf('*/', i) < 0 ? sql.length : sql.indexOf('*/', i) + 2;
    else if (c === "'") {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === "'" && sql[j + 1] !== "'")) j += sql[j] === "'" ? 2 : 1;
      out.push("'?'");
      i = j + 1;
    } else if (c === '"') {
      const j = sql.indexOf('"', i + 1);
      out.push(sql.slice(i + 1, j).toLowerCase());
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i))![0];
      out.push(m.toLowerCase());
      i += m.length;
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9.]+/.exec(sql.slice(i))![0];
      out.push('0');
      i += m.length;
    } else if (c === '$' && /[0-9]/.test(sql[i + 1] ?? '')) {
      const m = /^\$[0-9]+/.exec(sql.slice(i))![0];
      out.push('?');
      i += m.length;
    } else {
      const two = sql.slice(i, i + 2);
      const op = ['::', '<=', '>=', '<>', '!=', '||', '->'].includes(two) ? two : c;
      out.push(op);
      i += op.length;
    }
  }
  return out;
}

/** Statements of a text (split on top-level `;`). */
export function splitStatements(sql: string): Token[][] {
  const all: Token[][] = [[]];
  for (const t of tokenize(sql)) {
    if (t === ';') all.push([]);
    else all[all.length - 1].push(t);
  }
  return all.filter((s) => s.length);
}

function group(tokens: Token[]): Group {
  const root: Group = { items: [] };
  const stack: Group[] = [root];
  for (const t of tokens) {
    if (t === '(') {
      const g: Group = { items: [] };
      stack[stack.length - 1].items.push(g);
      stack.push(g);
    } else if (t === ')') {
      if (stack.length > 1) stack.pop();
    } else stack[stack.length - 1].items.push(t);
  }
  return root;
}

const isBlock = (g: Group): boolean => g.items[0] === 'select' || g.items[0] === 'with';

/** The block's own tokens, non-block groups inlined (marked by '(' and ')'), nested blocks as one '<subquery>' each. */
function flatten(g: Group, blocks: Group[]): Token[] {
  const out: Token[] = [];
  for (const it of g.items) {
    if (typeof it === 'string') out.push(it);
    else if (isBlock(it)) {
      blocks.push(it);
      out.push('<subquery>');
    } else out.push('(', ...flatten(it, blocks), ')');
  }
  return out;
}

/** A block's parts: INSERT … SELECT and set operations are checked part by part. */
function parts(tokens: Token[]): Token[][] {
  const out: Token[][] = [[]];
  let depth = 0;
  tokens.forEach((t, i) => {
    if (t === '(') depth++;
    if (t === ')') depth--;
    const split =
      depth === 0 &&
      ((t === 'select' && i > 0 && tokens[i - 1] !== '(' && !['union', 'all', 'except', 'intersect'].includes(tokens[i - 1])) ||
        ['union', 'except', 'intersect'].includes(t));
    if (split) out.push([]);
    if (!['union', 'except', 'intersect'].includes(t) && !(t === 'all' && ['union', 'except', 'intersect'].includes(tokens[i - 1])))
      out[out.length - 1].push(t);
  });
  return out.filter((p) => p.length);
}

export interface TableRef {
  table: string;
  alias: string;
}

export interface Unscoped extends TableRef {
  block: string;
}

function refsAndScopes(p: Token[]): { refs: TableRef[]; qualified: Set<string>; bare: boolean; usingTenant: boolean } {
  const refs: TableRef[] = [];
  const qualified = new Set<string>();
  let bare = false;
  let usingTenant = false;
  let filter = false;
  let insertColumns = false;
  let depth = 0;
  let filterDepth = -1;
  let usingDepth = -1;
  for (let i = 0; i < p.length; i++) {
    const t = p[i];
    if (t === '(') {
      depth++;
      if (i > 0 && p[i - 1] === 'using') usingDepth = depth;
      // INSERT INTO t ( columns ): the column list places the row, so it counts like a filter.
      if (i >= 2 && p[i - 2] === 'into') insertColumns = true;
      continue;
    }
    if (t === ')') {
      if (depth === usingDepth) usingDepth = -1;
      depth--;
      if (insertColumns && depth === 0) insertColumns = false;
      continue;
    }
    if (['where', 'having'].includes(t) || (t === 'on' && p[i + 1] !== 'conflict')) {
      filter = true;
      filterDepth = depth;
    } else if (['returning', 'order', 'group', 'limit', 'set', 'select', 'do'].includes(t) && depth <= filterDepth) filter = false;
    if (['from', 'join', 'update', 'into', 'using'].includes(t)) {
      // A comma-separated FROM list names several tables.
      let j = i + 1;
      for (;;) {
        const name = p[j];
        if (!name || KEYWORDS.has(name) || !/^[a-z_][a-z0-9_$]*$/.test(name)) break;
        let alias = name;
        let k = j + 1;
        if (p[k] === '.') {
          // schema.table
          alias = p[k + 1];
          k += 2;
        }
        const table = alias;
        if (p[k] === 'as') k++;
        if (p[k] && !KEYWORDS.has(p[k]) && /^[a-z_][a-z0-9_$]*$/.test(p[k])) alias = p[k++];
        refs.push({ table, alias });
        if (t === 'from' && p[k] === ',') j = k + 1;
        else break;
      }
    }
    if (t === 'tenant_id' && p[i - 1] !== '.') {
      if (usingDepth > 0) usingTenant = true;
      else if (filter || insertColumns) bare = true;
    }
    if (t === 'tenant_id' && p[i - 1] === '.' && (filter || insertColumns)) qualified.add(p[i - 2]);
  }
  return { refs, qualified, bare, usingTenant };
}

/** Tenant-data tables the statement touches without constraining `tenant_id` (empty: it is tenant-scoped). */
export function unscopedTenantTables(sql: string, tenantTables: ReadonlySet<string>): Unscoped[] {
  const found: Unscoped[] = [];
  for (const statement of splitStatements(sql)) {
    const pending: Group[] = [group(statement)];
    const touched: TableRef[] = [];
    while (pending.length) {
      const block = pending.pop()!;
      for (const p of parts(flatten(block, pending))) {
        const { refs, qualified, bare, usingTenant } = refsAndScopes(p);
        const tenantRefs = refs.filter((r) => tenantTables.has(r.table));
        touched.push(...tenantRefs);
        for (const r of tenantRefs) {
          const ok = qualified.has(r.alias) || usingTenant || (bare && tenantRefs.length === 1);
          if (!ok) found.push({ ...r, block: p.join(' ').slice(0, 300) });
        }
      }
    }
    // Tables tied to each other by tenant_id but to no tenant at all: a scan of every tenant.
    if (touched.length && !found.length && !anchored(statement)) {
      found.push({ table: [...new Set(touched.map((r) => r.table))].join(', '), alias: '', block: 'tenant_id compared with no value' });
    }
  }
  return found;
}

/**
 * The statement compares some tenant_id with a value (`tenant_id = ?`, `IN (?, …)`, `= ANY(?)`), or
 * inserts one (a column list naming it).
 */
function anchored(t: Token[]): boolean {
  return t.some((tok, i) => {
    if (tok !== 'tenant_id') return false;
    const after = t.slice(i + 1, i + 5);
    if ((after[0] === '=' || after[0] === 'in') && after.some((x) => x === '?' || x === "'?'")) return true;
    const before = t.slice(Math.max(0, i - 4), i);
    if (before.includes('=') && (before.includes('?') || before.includes("'?'"))) return true;
    // INSERT INTO table ( … tenant_id … )
    const open = t.lastIndexOf('(', i);
    return open >= 2 && t[open - 2] === 'into' && !t.slice(open, i).includes(')');
  });
}

/** Whitespace collapsed: the form allowlist patterns are matched against. */
export function normalizeSql(sql: string): string {
  return sql.replace(/\s+/g, ' ').trim();
}
