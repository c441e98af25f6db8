import { parentPort, workerData } from 'node:worker_threads';
import { AppendWriterTurns } from './append-writer-thread';
import { openSqlite } from './sqlite-connection';

// The writer thread's entry (AppendWriterThread spawns it): its connection, and its turns (append-writer-thread.ts).
const turns = new AppendWriterTurns(openSqlite((workerData as { file: string }).file), parentPort!);
parentPort!.on('message', (msg: Parameters<AppendWriterTurns['receive']>[0]) => turns.receive(msg));
