import * as fs from 'node:fs';
import * as path from 'node:path';
import { MessagePort, Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { DomainError } from '../../common/domain-error';
import { AppendOutcome, AppendRequest } from '../event-log.port';
import { AppendCall, AppendReply, EraseCall, EraseReply, WireOutcome, WriteCall, WriteReply } from './sqlite-append.protocol';
import { SqliteAppendTransaction } from './sqlite-append-transaction';
import { SqliteErasureTransaction } from './sqlite-erasure';
import { ErasureResult } from '../erasure.port';
import { SqlWrite, SqlWriteOutcome, SqliteWriteBatch } from './sqlite-write-batch';

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

/**
 * SQLite's writer thread, a named asynchronous boundary of the append path (ARCHITECTURE.md, "One
 * event, hop by hop"). This side, on the event loop, sends group commits (appends, erasures, other
 * writes) to the thread and answers them; restarts it if it dies. The thread's side is
 * AppendWriterTurns below (sqlite-append.worker.ts runs it): both sides of the boundary in one file.
 */
export class AppendWriterThread {
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

/**
 * The writer thread's side: better-sqlite3 is synchronous, so here the fsync of each group commit
 * blocks only this thread while the main one goes on parsing and answering requests. Every write
 * of the process but rare ones (tenants, uploads) comes here, so they wait for the write lock in
 * turn here instead of busy-waiting for each other on the event loop.
 *
 * Appends go before other writes (lane runs, notification logs, webhook bookkeeping): a request
 * waits for an append, nobody for a lane. Each call runs in a turn of its own, so the messages that
 * came during a commit are all here before the next one is picked.
 */
export class AppendWriterTurns {
  private readonly tx: SqliteAppendTransaction;
  private readonly batch: SqliteWriteBatch;
  private readonly erasure: SqliteErasureTransaction;
  // Erasures are requests too: they take the appends' turns, in arrival order with them.
  private readonly appends: (AppendCall | EraseCall)[] = [];
  private readonly writes: WriteCall[] = [];
  /** Lane runs and routing: after every other write (nobody waits for them but the lanes). */
  private readonly derived: WriteCall[] = [];
  private turnDue = false;

  constructor(
    private readonly db: Database.Database,
    private readonly port: MessagePort,
  ) {
    this.tx = new SqliteAppendTransaction(db);
    this.batch = new SqliteWriteBatch(db);
    this.erasure = new SqliteErasureTransaction(db);
  }

  /** A message from AppendWriterThread (the worker script's only listener hands each one here). */
  receive(msg: AppendCall | EraseCall | WriteCall | { close: true }): void {
    if ('close' in msg) {
      // The client closes only once every call is answered; anything left is run first all the same.
      for (let a = this.appends.shift(); a; a = this.appends.shift()) this.runRequest(a);
      for (let w = this.writes.shift(); w; w = this.writes.shift()) this.runWrites(w);
      for (let w = this.derived.shift(); w; w = this.derived.shift()) this.runWrites(w);
      this.db.close();
      this.port.close();
      return;
    }
    if ('writes' in msg) (msg.derived ? this.derived : this.writes).push(msg);
    else this.appends.push(msg);
    this.nextTurn();
  }

  private nextTurn(): void {
    if (this.turnDue || (this.appends.length === 0 && this.writes.length === 0 && this.derived.length === 0)) return;
    this.turnDue = true;
    setImmediate(() => {
      this.turnDue = false;
      const append = this.appends.shift();
      if (append) this.runRequest(append);
      else this.runWrites(this.writes.shift() ?? this.derived.shift()!);
      this.nextTurn();
    });
  }

  private runWrites(msg: WriteCall): void {
    let written: WriteReply;
    try {
      written = { id: msg.id, written: this.batch.commit(msg.writes, msg.derived === true) };
    } catch (e) {
      const err = e as { message?: string; code?: string };
      written = { id: msg.id, failure: { message: err.message ?? String(e), code: err.code } };
    }
    this.port.postMessage(written);
  }

  private runRequest(msg: AppendCall | EraseCall): void {
    if ('erase' in msg) this.runErase(msg);
    else this.runAppend(msg);
  }

  private runErase(msg: EraseCall): void {
    let reply: EraseReply;
    try {
      const { tenantId, aggregateId, now } = msg.erase;
      reply = { id: msg.id, erased: this.erasure.erase(tenantId, aggregateId, now) };
    } catch (e) {
      if (e instanceof DomainError) reply = { id: msg.id, refused: { code: e.code, message: e.message, details: e.details } };
      else {
        const err = e as { message?: string; code?: string };
        reply = { id: msg.id, failure: { message: err.message ?? String(e), code: err.code } };
      }
    }
    this.port.postMessage(reply);
  }

  private runAppend(msg: AppendCall): void {
    let reply: AppendReply;
    try {
      reply = { id: msg.id, outcomes: this.tx.append(msg.requests).map(toWire) };
    } catch (e) {
      const err = e as { message?: string; code?: string };
      reply = { id: msg.id, failure: { message: err.message ?? String(e), code: err.code } };
    }
    this.port.postMessage(reply);
  }
}

const toWire = (o: AppendOutcome): WireOutcome =>
  o.ok ? o : { ok: false, error: { code: o.error.code, message: o.error.message, details: o.error.details } };
