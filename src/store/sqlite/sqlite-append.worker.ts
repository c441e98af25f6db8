import { parentPort, workerData } from 'node:worker_threads';
import { AppendOutcome } from '../event-log.port';
import { SqliteAppendTransaction } from './sqlite-append-transaction';
import { openSqlite } from './sqlite-connection';
import { AppendReply, AppendCall, WireOutcome, WriteCall, WriteReply } from './sqlite-append.protocol';
import { SqliteWriteBatch } from './sqlite-write-batch';

// The writer thread: better-sqlite3 is synchronous, so here the fsync of each group commit
// blocks only this thread while the main one goes on parsing and answering requests. Every write
// of the process but rare ones (tenants, uploads) comes here, so they wait for the write lock in
// turn here instead of busy-waiting for each other on the event loop.
const db = openSqlite((workerData as { file: string }).file);
const tx = new SqliteAppendTransaction(db);
const batch = new SqliteWriteBatch(db);

const toWire = (o: AppendOutcome): WireOutcome =>
  o.ok ? o : { ok: false, error: { code: o.error.code, message: o.error.message, details: o.error.details } };

parentPort!.on('message', (msg: AppendCall | WriteCall | { close: true }) => {
  if ('close' in msg) {
    db.close();
    parentPort!.close();
    return;
  }
  if ('writes' in msg) {
    let written: WriteReply;
    try {
      written = { id: msg.id, written: batch.commit(msg.writes) };
    } catch (e) {
      const err = e as { message?: string; code?: string };
      written = { id: msg.id, failure: { message: err.message ?? String(e), code: err.code } };
    }
    parentPort!.postMessage(written);
    return;
  }
  let reply: AppendReply;
  try {
    reply = { id: msg.id, outcomes: tx.append(msg.requests).map(toWire) };
  } catch (e) {
    const err = e as { message?: string; code?: string };
    reply = { id: msg.id, failure: { message: err.message ?? String(e), code: err.code } };
  }
  parentPort!.postMessage(reply);
});
