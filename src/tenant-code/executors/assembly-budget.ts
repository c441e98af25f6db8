export interface AssemblyBudgetOptions {
  /** Assemblies loaded at once in one executor. */
  maxCount: number;
  /** Their compiled size (DLL bytes) in all. */
  maxBytes: number;
}

export interface BudgetEntry {
  key: string;
  bytes: number;
  /** Calls queued or in flight that need it: never unloaded while pinned. */
  pins: number;
}

/**
 * What one executor has loaded, least recently used first, and what to unload to make room for one
 * more. A pinned assembly (a call waits for it) is never chosen, so the budget can be exceeded for
 * as long as every loaded assembly is in use; it is met again at the next load after that.
 */
export class AssemblyBudget<E extends BudgetEntry> {
  /** Insertion order is recency: a use moves the entry to the end. */
  private readonly entries = new Map<string, E>();
  private totalBytes = 0;

  constructor(private readonly options: AssemblyBudgetOptions) {}

  get count(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  get(key: string): E | undefined {
    return this.entries.get(key);
  }

  /** Marks an entry as used now. */
  touch(entry: E): void {
    this.entries.delete(entry.key);
    this.entries.set(entry.key, entry);
  }

  add(entry: E): void {
    this.remove(entry.key);
    this.entries.set(entry.key, entry);
    this.totalBytes += entry.bytes;
  }

  remove(key: string): E | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.totalBytes -= e.bytes;
    return e;
  }

  /** Least recently used unpinned entries to unload so that one more of `incomingBytes` fits (not removed here). */
  victims(incomingBytes: number, exclude?: E): E[] {
    const out: E[] = [];
    let count = this.entries.size + 1;
    let bytes = this.totalBytes + incomingBytes;
    for (const e of this.entries.values()) {
      if (count <= this.options.maxCount && bytes <= this.options.maxBytes) break;
      if (e.pins > 0 || e === exclude) continue;
      out.push(e);
      count--;
      bytes -= e.bytes;
    }
    return out;
  }

  values(): IterableIterator<E> {
    return this.entries.values();
  }
}
