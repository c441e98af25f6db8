import { ErrorCode } from '../../common/domain-error';
import { AppendRequest, AppendResult } from '../event-log.port';

/** Messages between SqliteStore and its append worker (errors cross as plain data). */
export interface AppendCall {
  id: number;
  requests: AppendRequest[];
}

export type WireOutcome =
  | { ok: true; result: AppendResult }
  | { ok: false; error: { code: ErrorCode; message: string; details: Record<string, unknown> } };

export type AppendReply =
  | { id: number; outcomes: WireOutcome[] }
  | { id: number; failure: { message: string; code?: string } };
