import { parentPort, workerData } from 'node:worker_threads';
import { AppendOutcome } from '../event-log.port';
import { SqliteAppendTransaction } from './sqlite-append-transaction';
import { openSqlite } from './sqlite-connection';
import { AppendReply, AppendCall, WireOutcome } from './sqlite-append.protocol';

// The writer thread: better-sqlite3 is synchronous, so here the fsync of each group commit
// blocks only this thread while the main one goes on parsing and answering requests.
const db = openSqlite((workerData as { file: string }).file);
const tx = new SqliteAppendTransaction(db);

const toWire = (o: AppendOutcome): WireOutcome =>
  o.ok ? o : { ok: false, error: { code: o.error.code, message: o.error.message, details: o.error.details } };

parentPort!.on('message', (msg: AppendCall | { close: true }) => {
  if ('close' in msg) {
    db.close();
    parentPort!.close();
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
