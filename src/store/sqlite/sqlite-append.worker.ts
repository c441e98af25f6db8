import { parentPort, workerData } from 'node:worker_threads';
import { AppendOutcome } from '../event-log.port';
import { SqliteAppendTransaction } from './sqlite-append-transaction';
import { openSqlite } from './sqlite-connection';
import { AppendReply, AppendCall, EraseCall, EraseReply, WireOutcome, WriteCall, WriteReply } from './sqlite-append.protocol';
import { SqliteErasureTransaction } from './sqlite-erasure';
import { DomainError } from '../../common/domain-error';
import { SqliteWriteBatch } from './sqlite-write-batch';

// The writer thread: better-sqlite3 is synchronous, so here the fsync of each group commit
// blocks only this thread while the main one goes on parsing and answering requests. Every write
// of the process but rare ones (tenants, uploads) comes here, so they wait for the write lock in
// turn here instead of busy-waiting for each other on the event loop.
const db = openSqlite((workerData as { file: string }).file);
const tx = new SqliteAppendTransaction(db);
const batch = new SqliteWriteBatch(db);
const erasure = new SqliteErasureTransaction(db);

const toWire = (o: AppendOutcome): WireOutcome =>
  o.ok ? o : { ok: false, error: { code: o.error.code, message: o.error.message, details: o.error.details } };

/**
 * Appends go before other writes (lane runs, notification logs, webhook bookkeeping): a request
 * waits for an append, nobody for a lane. Each call runs in a turn of its own, so the messages that
 * came during a commit are all here before the next one is picked.
 */
// Erasures are requests too: they take the appends' turns, in arrival order with them.
const appends: (AppendCall | EraseCall)[] = [];
const writes: WriteCall[] = [];
/** Lane runs and routing: after every other write (nobody waits for them but the lanes). */
const derived: WriteCall[] = [];
let turnDue = false;

function nextTurn(): void {
  if (turnDue || (appends.length === 0 && writes.length === 0 && derived.length === 0)) return;
  turnDue = true;
  setImmediate(() => {
    turnDue = false;
    const append = appends.shift();
    if (append) runRequest(append);
    else runWrites(writes.shift() ?? derived.shift()!);
    nextTurn();
  });
}

parentPort!.on('message', (msg: AppendCall | EraseCall | WriteCall | { close: true }) => {
  if ('close' in msg) {
    // The client closes only once every call is answered; anything left is run first all the same.
    for (let a = appends.shift(); a; a = appends.shift()) runRequest(a);
    for (let w = writes.shift(); w; w = writes.shift()) runWrites(w);
    for (let w = derived.shift(); w; w = derived.shift()) runWrites(w);
    db.close();
    parentPort!.close();
    return;
  }
  if ('writes' in msg) (msg.derived ? derived : writes).push(msg);
  else appends.push(msg);
  nextTurn();
});

function runWrites(msg: WriteCall): void {
  let written: WriteReply;
  try {
    written = { id: msg.id, written: batch.commit(msg.writes, msg.derived === true) };
  } catch (e) {
    const err = e as { message?: string; code?: string };
    written = { id: msg.id, failure: { message: err.message ?? String(e), code: err.code } };
  }
  parentPort!.postMessage(written);
}

function runRequest(msg: AppendCall | EraseCall): void {
  if ('erase' in msg) runErase(msg);
  else runAppend(msg);
}

function runErase(msg: EraseCall): void {
  let reply: EraseReply;
  try {
    const { tenantId, aggregateId, now } = msg.erase;
    reply = { id: msg.id, erased: erasure.erase(tenantId, aggregateId, now) };
  } catch (e) {
    if (e instanceof DomainError) reply = { id: msg.id, refused: { code: e.code, message: e.message, details: e.details } };
    else {
      const err = e as { message?: string; code?: string };
      reply = { id: msg.id, failure: { message: err.message ?? String(e), code: err.code } };
    }
  }
  parentPort!.postMessage(reply);
}

function runAppend(msg: AppendCall): void {
  let reply: AppendReply;
  try {
    reply = { id: msg.id, outcomes: tx.append(msg.requests).map(toWire) };
  } catch (e) {
    const err = e as { message?: string; code?: string };
    reply = { id: msg.id, failure: { message: err.message ?? String(e), code: err.code } };
  }
  parentPort!.postMessage(reply);
}
