import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { DomainError } from '../../common/domain-error';
import { AppendOutcome, AppendRequest } from '../event-log.port';
import { AppendReply, EraseReply, WriteReply } from './sqlite-append.protocol';
import { ErasureResult } from '../erasure.port';
import { SqlWrite, SqlWriteOutcome } from './sqlite-write-batch';

/** Where the compiled worker is; under ts-jest the sources run from src/, the worker from dist/. */
function workerScript(): string {
  const beside = path.join(__dirname, 'sqlite-append.worker.js');
  if (fs.existsSync(beside)) return beside;
  const built = path.resolve(__dirname, '../../../dist/src/store/sqlite/sqlite-append.worker.js');
  if (fs.existsSync(built)) return built;
  throw new Error(`SQLite append worker not found (${beside}); run 'npm run build'`);
}

interface Pending {
  resolve: (o: any) => void;
  reject: (e: unknown) => void;
}

/** Sends group commits (appends, other writes) to the writer thread and answers them; restarts it if it dies. */
export class SqliteAppendWorkerClient {
  private worker?: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private idle: (() => void)[] = [];
  private closed = false;

  constructor(private readonly file: string) {}

  append(requests: AppendRequest[]): Promise<AppendOutcome[]> {
    if (this.closed) return Promise.reject(new Error('the SQLite store is closed'));
    const worker = this.worker ?? this.spawn();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, requests });
    });
  }

  /** An erasure, in the appends' turn (see SqliteErasureTransaction). */
  erase(tenantId: string, aggregateId: string, now: number): Promise<ErasureResult> {
    if (this.closed) return Promise.reject(new Error('the SQLite store is closed'));
    const worker = this.worker ?? this.spawn();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, erase: { tenantId, aggregateId, now } });
    });
  }

  /** One group commit of other writes (see SqliteWriteBatch; `derived`: its durability class). */
  write(writes: SqlWrite[], derived = false): Promise<SqlWriteOutcome[]> {
    if (this.closed) return Promise.reject(new Error('the SQLite store is closed'));
    const worker = this.worker ?? this.spawn();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage(derived ? { id, writes, derived: true } : { id, writes });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pending.size > 0) await new Promise<void>((r) => this.idle.push(r));
    const w = this.worker;
    if (!w) return;
    this.worker = undefined;
    const exited = new Promise((r) => w.once('exit', r));
    w.postMessage({ close: true });
    await exited;
  }

  private spawn(): Worker {
    const w = new Worker(workerScript(), { workerData: { file: this.file } });
    w.on('message', (reply: AppendReply | WriteReply | EraseReply) => this.settle(reply));
    const fail = (err: unknown) => {
      if (this.worker === w) this.worker = undefined;
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.reject(err instanceof Error ? err : new Error(`SQLite append worker stopped (${String(err)})`));
      }
      this.idle.splice(0).forEach((r) => r());
    };
    w.on('error', fail);
    w.on('exit', (code) => {
      if (this.pending.size > 0) fail(new Error(`SQLite append worker exited with code ${code}`));
    });
    this.worker = w;
    return w;
  }

  private settle(reply: AppendReply | WriteReply | EraseReply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if ('failure' in reply) {
      p.reject(Object.assign(new Error(reply.failure.message), { code: reply.failure.code }));
    } else if ('written' in reply) {
      p.resolve(reply.written);
    } else if ('erased' in reply) {
      p.resolve(reply.erased);
    } else if ('refused' in reply) {
      p.reject(new DomainError(reply.refused.code, reply.refused.message, reply.refused.details));
    } else {
      p.resolve(
        reply.outcomes.map((o) => (o.ok ? o : { ok: false, error: new DomainError(o.error.code, o.error.message, o.error.details) })),
      );
    }
    if (this.pending.size === 0) this.idle.splice(0).forEach((r) => r());
  }
}
