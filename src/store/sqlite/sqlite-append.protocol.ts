import { ErrorCode } from '../../common/domain-error';
import { AppendRequest, AppendResult } from '../event-log.port';
import { ErasureResult } from '../erasure.port';
import { SqlWrite, SqlWriteOutcome } from './sqlite-write-batch';

/** Messages between SqliteStore and its writer thread (errors cross as plain data). */
export interface AppendCall {
  id: number;
  requests: AppendRequest[];
}

/** A group commit of the shared SQL repositories' writes (SqliteSqlRunner). */
export interface WriteCall {
  id: number;
  writes: SqlWrite[];
  /** Derived rows (lane runs, routing): their own durability class and the writer's last turn (SqliteWriteBatch). */
  derived?: true;
}

/** An erasure (SqliteErasureTransaction), run in the appends' turn. */
export interface EraseCall {
  id: number;
  erase: { tenantId: string; aggregateId: string; now: number };
}

/** `refused`: a DomainError (NOT_FOUND, RESERVED_NAME) as plain data. */
export type EraseReply =
  | { id: number; erased: ErasureResult }
  | { id: number; refused: { code: ErrorCode; message: string; details: Record<string, unknown> } }
  | { id: number; failure: { message: string; code?: string } };

export type WriteReply = { id: number; written: SqlWriteOutcome[] } | { id: number; failure: { message: string; code?: string } };

export type WireOutcome =
  { ok: true; result: AppendResult } | { ok: false; error: { code: ErrorCode; message: string; details: Record<string, unknown> } };

export type AppendReply = { id: number; outcomes: WireOutcome[] } | { id: number; failure: { message: string; code?: string } };
