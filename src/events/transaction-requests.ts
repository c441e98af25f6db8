import { validationFailed } from '../common/domain-error';
import { inferAggregateType, LIMITS } from '../common/event-limits';
import { uuidv7 } from '../common/uuid-v7';
import { AppendCondition, AppendRequest, NewEvent } from '../store/event-log.port';

/** At most this many distinct aggregates in one POST /events/transaction (README "Transactions"). */
export const TRANSACTION_MAX_AGGREGATES = 100;

/** One event of a transaction, validated and encoded (data and metadata as JSON text). */
export interface TransactionEventInput {
  aggregateId: string;
  aggregateType?: string;
  event: NewEvent;
  /** JSON text, or undefined. */
  metadata?: string;
}

export interface TransactionInput {
  events: TransactionEventInput[];
  expectedVersions?: Record<string, unknown>;
  condition?: AppendCondition;
  correlationId?: string;
  causationId?: string;
  traceParent?: string;
  traceState?: string;
}

/**
 * A transaction as the store takes it: one AppendRequest per aggregate, in the order of each
 * aggregate's first event, each holding that aggregate's events in the order given, every one
 * marked with the same `transaction: {id, size}`. The condition rides on the first member (the
 * idempotency claim too: the appender adds it there). The events of one aggregate must agree on
 * its type and on the metadata (a request has one of each); a disagreement is a 400 naming the event.
 */
export function transactionRequests(tenantId: string, input: TransactionInput): AppendRequest[] {
  const n = input.events.length;
  if (n === 0) throw validationFailed('events', 'must hold at least one event');
  if (n > LIMITS.eventsPerBatch) throw validationFailed('events', `must hold at most ${LIMITS.eventsPerBatch} events`);
  const groups = new Map<string, { first: number; aggregateType?: string; typeFrom?: number; metadata?: string; events: NewEvent[] }>();
  input.events.forEach((e, i) => {
    let g = groups.get(e.aggregateId);
    if (!g) {
      if (groups.size === TRANSACTION_MAX_AGGREGATES) {
        throw validationFailed(`events[${i}].aggregateId`, `a transaction spans at most ${TRANSACTION_MAX_AGGREGATES} aggregates`);
      }
      groups.set(e.aggregateId, (g = { first: i, metadata: e.metadata, events: [] }));
    } else if (g.metadata !== e.metadata) {
      throw validationFailed(
        `events[${i}].metadata`,
        `must be the same as events[${g.first}].metadata (one aggregate's events share their metadata)`,
      );
    }
    if (e.aggregateType !== undefined) {
      if (g.aggregateType !== undefined && g.aggregateType !== e.aggregateType) {
        throw validationFailed(`events[${i}].aggregateType`, `'${e.aggregateType}' differs from events[${g.typeFrom}].aggregateType`);
      }
      g.aggregateType = e.aggregateType;
      g.typeFrom ??= i;
    }
    g.events.push(e.event);
  });
  const expected = expectedVersionsOf(input.expectedVersions, groups);
  const transaction = { id: uuidv7(), size: groups.size };
  return [...groups.entries()].map(([aggregateId, g], i) => ({
    tenantId,
    aggregateId,
    aggregateType: g.aggregateType,
    inferredType: inferAggregateType(aggregateId),
    expectedVersion: expected.get(aggregateId),
    events: g.events,
    correlationId: input.correlationId,
    causationId: input.causationId,
    metadata: g.metadata,
    ...(input.traceParent !== undefined ? { traceParent: input.traceParent } : {}),
    ...(input.traceState !== undefined ? { traceState: input.traceState } : {}),
    ...(i === 0 && input.condition ? { condition: input.condition } : {}),
    transaction,
  }));
}

function expectedVersionsOf(value: Record<string, unknown> | undefined, groups: Map<string, unknown>): Map<string, number> {
  const expected = new Map<string, number>();
  if (value === undefined) return expected;
  for (const [aggregateId, version] of Object.entries(value)) {
    const field = `expectedVersions.${aggregateId}`;
    if (!groups.has(aggregateId)) throw validationFailed(field, 'is not an aggregate of events');
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) {
      throw validationFailed(field, 'must be an integer version >= 0');
    }
    expected.set(aggregateId, version);
  }
  return expected;
}
