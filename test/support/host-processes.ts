import * as fs from 'node:fs';

/** Every process below `pid` (children first found by scanning /proc for their parent). */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may hold spaces and parentheses, so parse after the last ')'.
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone meanwhile */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parents)
      if (parent === p) {
        out.push(child);
        walk(child);
      }
  };
  walk(pid);
  return out;
}

/**
 * The .NET host process itself under a launcher's process (bwrap, whose pid Node holds): the deepest
 * descendant running dotnet.
 */
export function dotnetProcessUnder(pid: number): number | undefined {
  const candidates = [pid, ...descendants(pid)].filter((p) => {
    try {
      return fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'dotnet';
    } catch {
      return false;
    }
  });
  return candidates[candidates.length - 1];
}

/** Uid (real) of a process, from /proc/<pid>/status. */
export function uidOf(pid: number): number {
  const m = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]);
}
